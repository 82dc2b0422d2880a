//! `--engine null`: no I/O and no files. What is left is iolab's own cost per operation (fio's
//! null engine).

use super::ops::Shared;
use super::ops::SyncEngine;
use crate::model::job::EngineKind;

pub struct Null;

impl<'a> SyncEngine<'a> for Null {
    const KIND: EngineKind = EngineKind::Null;

    fn open(_: &Shared<'a>) -> std::io::Result<Self> {
        Ok(Null)
    }

    #[inline]
    fn read(&mut self, _: u32, _: u64, buf: &mut [u8]) -> Result<(), i32> {
        std::hint::black_box(buf);
        Ok(())
    }

    #[inline]
    fn write(&mut self, _: u32, _: u64, buf: &[u8]) -> Result<(), i32> {
        std::hint::black_box(buf);
        Ok(())
    }

    #[inline]
    fn fsync(&mut self, _: u32) -> Result<(), i32> {
        Ok(())
    }
}
