//! Limits of a script on Windows: a Job Object (job memory, active
//! processes, CPU time, every process killed when the job is closed). There
//! is no file-system or network isolation without administrator rights
//! here, so a run on Windows is "not isolated": refused unless the user
//! allowed that in Settings. Written from the `windows-sys` documentation;
//! it cannot be built or run on the Linux machines Maskflow is tested on.
#![allow(unsafe_code)]

use std::os::windows::io::AsRawHandle;
use std::process::Child;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_ACTIVE_PROCESS,
    JOB_OBJECT_LIMIT_JOB_MEMORY, JOB_OBJECT_LIMIT_JOB_TIME, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
    SetInformationJobObject, TerminateJobObject,
};

use crate::{LimitState, Limits, mib};

/// A Job Object holding one run; closing it kills what is left of the run.
#[derive(Debug)]
pub struct Job(HANDLE);

impl Job {
    /// A job with the run's memory, process and CPU-time limits.
    pub fn new(limits: &Limits) -> std::io::Result<Job> {
        // SAFETY: no security attributes and no name: an anonymous job.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        let job = Job(handle); // closed on drop, also on the error below
        let mut info = JOBOBJECT_EXTENDED_LIMIT_INFORMATION::default();
        let basic = &mut info.BasicLimitInformation;
        basic.LimitFlags = JOB_OBJECT_LIMIT_JOB_MEMORY
            | JOB_OBJECT_LIMIT_ACTIVE_PROCESS
            | JOB_OBJECT_LIMIT_JOB_TIME
            | JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        basic.ActiveProcessLimit = u32::try_from(limits.max_processes).unwrap_or(u32::MAX);
        // In units of 100 ns.
        basic.PerJobUserTimeLimit =
            i64::try_from(limits.cpu_seconds.saturating_mul(10_000_000)).unwrap_or(i64::MAX);
        info.JobMemoryLimit = usize::try_from(limits.memory_bytes).unwrap_or(usize::MAX);
        let size = u32::try_from(std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>())
            .unwrap_or(u32::MAX);
        // SAFETY: `info` is a valid, initialised structure of the class
        // passed, and `size` is its size.
        let ok = unsafe {
            SetInformationJobObject(
                job.0,
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                size,
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(job)
    }

    /// Puts the just-started child (and so everything it starts) in the job.
    pub fn assign(&self, child: &Child) -> std::io::Result<()> {
        // SAFETY: both handles are valid while `self` and `child` live.
        let ok = unsafe { AssignProcessToJobObject(self.0, child.as_raw_handle() as HANDLE) };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// Kills every process in the job.
    pub fn terminate(&self) {
        // SAFETY: a valid job handle.
        unsafe {
            TerminateJobObject(self.0, 1);
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        // SAFETY: the handle is ours and closed once; with
        // KILL_ON_JOB_CLOSE this also ends what is left of the run.
        unsafe {
            CloseHandle(self.0);
        }
    }
}

/// The sentence of a refused run on Windows.
pub fn refusal() -> String {
    "Maskflow did not run the script: it has no file-system and network isolation for scripts \
     on Windows (only memory, CPU and process limits, through a Job Object). Generated scripts \
     are untrusted code, so they only run isolated. To run them without isolation anyway, turn \
     on \"Run scripts without isolation\" in Settings (on this machine only; every run then \
     shows it)."
        .to_owned()
}

/// The limits report of a run on Windows; `job` says whether the run was
/// in a Job Object.
pub fn report(limits: &Limits, job: bool) -> Vec<LimitState> {
    let by_job = |name: &str, limit: String, how: &str| LimitState {
        name: name.into(),
        limit,
        mechanism: job.then(|| format!("Job Object ({how})")),
        note: (!job).then(|| "not enforced: the Job Object could not be made".to_owned()),
    };
    const NOT_ISOLATED: &str = "NOT ISOLATED: run without isolation, as allowed in Settings";
    vec![
        LimitState {
            name: "file_system".into(),
            limit: "its working folder, its inputs and the Python runtime".into(),
            mechanism: None,
            note: Some(NOT_ISOLATED.into()),
        },
        by_job("memory", mib(limits.memory_bytes), "job memory limit"),
        by_job(
            "cpu",
            format!("{} s", limits.cpu_seconds),
            "job user-time limit",
        ),
        by_job(
            "processes",
            limits.max_processes.to_string(),
            "active process limit",
        ),
        LimitState {
            name: "output".into(),
            limit: mib(limits.output_bytes),
            mechanism: Some("a check of the whole run folder".into()),
            note: None,
        },
        LimitState {
            name: "network".into(),
            limit: if limits.no_network { "none" } else { "allowed" }.into(),
            mechanism: None,
            note: limits.no_network.then(|| NOT_ISOLATED.to_owned()),
        },
    ]
}
