//! What to run and where: the plan, offset distributions and the per-thread random generator,
//! seeds, and the roots the system is read from.

pub mod dist;
pub mod fio_options;
pub mod fio_rand;
pub mod fio_vocab;
pub mod fiojob;
pub mod input;
pub mod plan;
pub mod roots;
