//! Helper threads that live for a whole Chrome load: each block's work is handed to
//! them instead of to threads spawned and joined per block (about 80 blocks on a
//! 300 MB trace), so a block costs a wake-up, not a spawn, a new stack and a join.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{Scope, Thread};

/// A task as the helpers see it: its lifetime erased (see `Crew::run` for why that is
/// sound).
#[derive(Clone, Copy)]
struct TaskPtr(*const (dyn Fn() + Sync + 'static));

// SAFETY: the pointee is `Sync` (so sharing a reference to it with other threads is
// sound), and `Crew::run` keeps it alive while any helper can reach it.
unsafe impl Send for TaskPtr {}

/// What the helpers are told: the round's number, its task, and whether to leave.
struct Post {
    round: u64,
    task: Option<TaskPtr>,
    quit: bool,
}

/// The state the loading thread and its helpers share.
pub(super) struct Board {
    post: Mutex<Post>,
    wake: Condvar,
    /// Helpers that have not finished the current round's task.
    left: AtomicUsize,
    /// The first panic of a helper in this round, resumed on the loading thread.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    owner: Thread,
}

impl Board {
    pub(super) fn new() -> Self {
        Board {
            post: Mutex::new(Post {
                round: 0,
                task: None,
                quit: false,
            }),
            wake: Condvar::new(),
            left: AtomicUsize::new(0),
            panic: Mutex::new(None),
            owner: std::thread::current(),
        }
    }

    fn post(&self) -> MutexGuard<'_, Post> {
        // The lock is never held while a task runs, so it is never poisoned by one.
        self.post.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `helpers` threads (spawned in the load's scope) that run each round's task beside
/// the loading thread. Dropping the crew lets them leave; the scope joins them.
pub(super) struct Crew<'b> {
    board: &'b Board,
    helpers: Vec<Thread>,
}

impl<'b> Crew<'b> {
    pub(super) fn start<'s>(s: &'s Scope<'s, '_>, board: &'b Board, helpers: usize) -> Self
    where
        'b: 's,
    {
        let helpers = (0..helpers)
            .map(|_| s.spawn(move || serve(board)).thread().clone())
            .collect();
        Crew { board, helpers }
    }

    /// The helper threads, to wake one parked inside a task.
    pub(super) fn threads(&self) -> &[Thread] {
        &self.helpers
    }

    /// Runs `task` on every helper while `mine` runs on this thread; returns when all
    /// have finished. A helper's panic is resumed here, as a joined thread's would be.
    /// `mine` must not return (or unwind) while a helper can be waiting in `task` for
    /// something only `mine` provides.
    pub(super) fn run<'t>(&self, task: &'t (dyn Fn() + Sync + 't), mine: impl FnOnce()) {
        let b = self.board;
        b.left.store(self.helpers.len(), Ordering::Release);
        // SAFETY (the erased lifetime): helpers dereference the pointer only between
        // this post and their decrement of `left`; `Wait` below does not let this
        // function return or unwind before `left` is 0, so `task` (borrowed for 't,
        // which outlasts this call) is alive whenever a helper reads it.
        let erased: *const (dyn Fn() + Sync + 't) = task;
        let erased = unsafe {
            std::mem::transmute::<*const (dyn Fn() + Sync + 't), *const (dyn Fn() + Sync + 'static)>(
                erased,
            )
        };
        {
            let mut p = b.post();
            p.round += 1;
            p.task = Some(TaskPtr(erased));
        }
        b.wake.notify_all();
        let wait = Wait(b);
        mine();
        drop(wait);
        let panic = b
            .panic
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(p) = panic {
            std::panic::resume_unwind(p);
        }
    }
}

impl Drop for Crew<'_> {
    fn drop(&mut self) {
        self.board.post().quit = true;
        self.board.wake.notify_all();
    }
}

/// Waits (also while unwinding) until every helper has finished the round's task.
struct Wait<'b>(&'b Board);

impl Drop for Wait<'_> {
    fn drop(&mut self) {
        while self.0.left.load(Ordering::Acquire) != 0 {
            std::thread::park();
        }
    }
}

/// A helper's life: each new round's task once, until told to quit.
fn serve(b: &Board) {
    let mut seen = 0;
    loop {
        let task = {
            let mut p = b.post();
            while p.round == seen && !p.quit {
                p = b.wake.wait(p).unwrap_or_else(PoisonError::into_inner);
            }
            if p.quit {
                return;
            }
            seen = p.round;
            p.task
        };
        if let Some(TaskPtr(t)) = task {
            // SAFETY: see `Crew::run`: the task stays alive until `left` reaches 0,
            // which needs this helper's decrement below.
            let t = unsafe { &*t };
            if let Err(p) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(t)) {
                b.panic
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert(p);
            }
        }
        if b.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            b.owner.unpark();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_helper_runs_each_round() {
        let board = Board::new();
        let runs = AtomicUsize::new(0);
        std::thread::scope(|s| {
            let crew = Crew::start(s, &board, 3);
            for round in 1..=50 {
                let task = || {
                    runs.fetch_add(1, Ordering::Relaxed);
                };
                crew.run(&task, || {});
                assert_eq!(runs.load(Ordering::Relaxed), 3 * round);
            }
        });
    }

    #[test]
    fn a_helpers_panic_reaches_the_loading_thread() {
        let board = Board::new();
        let caught = std::thread::scope(|s| {
            let crew = Crew::start(s, &board, 1);
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                crew.run(&|| panic!("in a part"), || {})
            }))
        });
        let payload = caught.expect_err("the panic is resumed");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"in a part"));
    }
}
