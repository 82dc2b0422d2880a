//! The MPI communicator (rsmpi over the system's Open MPI), built with `--features mpi`.

use super::Comm;
use mpi::Count;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// MPI_COMM_WORLD; MPI is finalized when it is dropped.
pub struct World {
    world: SimpleCommunicator,
    _universe: mpi::environment::Universe,
}

/// Initializes MPI (once per process). None when it cannot be initialized.
pub fn init() -> Option<World> {
    let universe = mpi::initialize()?;
    Some(World {
        world: universe.world(),
        _universe: universe,
    })
}

impl Comm for World {
    fn rank(&self) -> u32 {
        self.world.rank() as u32
    }
    fn size(&self) -> u32 {
        self.world.size() as u32
    }
    fn all_max(&self, v: u8) -> u8 {
        let mut out = 0u8;
        self.world
            .all_reduce_into(&v, &mut out, SystemOperation::max());
        out
    }
    fn all_max_u64(&self, v: u64) -> u64 {
        let mut out = 0u64;
        self.world
            .all_reduce_into(&v, &mut out, SystemOperation::max());
        out
    }
    fn broadcast(&self, bytes: &[u8]) -> Vec<u8> {
        let root = self.world.process_at_rank(0);
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        let mut buf = if self.world.rank() == 0 {
            bytes.to_vec()
        } else {
            vec![0u8; len as usize]
        };
        root.broadcast_into(&mut buf[..]);
        buf
    }
    fn gather(&self, bytes: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        let len = bytes.len() as Count;
        if self.world.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(bytes);
            return None;
        }
        let n = self.world.size() as usize;
        let mut counts: Vec<Count> = vec![0; n];
        root.gather_into_root(&len, &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut buf = vec![0u8; total];
        {
            let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(bytes, &mut part);
        }
        Some(
            counts
                .iter()
                .zip(&displs)
                .map(|(&c, &d)| buf[d as usize..(d + c) as usize].to_vec())
                .collect(),
        )
    }
}
