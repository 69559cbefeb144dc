//! `maskflow schedule install` on macOS (a launchd agent) and Windows (a
//! Task Scheduler entry): compiled only there. Linux's systemd timer is in
//! `schedule_cmd`; the texts come from [`maskflow_server::schedule_units`].

use anyhow::Context;
use maskflow_server::schedule_units::UnitSpec;

/// Writes (or prints) `~/Library/LaunchAgents/com.maskflow.schedule.<name>.plist`.
#[cfg(target_os = "macos")]
pub fn install_launchd(spec: &UnitSpec, dry_run: bool) -> anyhow::Result<()> {
    let plist = maskflow_server::schedule_units::launchd_plist(spec)?;
    if dry_run {
        print!("{plist}");
        return Ok(());
    }
    let dir = dirs::home_dir()
        .context("no home folder is known")?
        .join("Library/LaunchAgents");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let path = dir.join(format!("com.maskflow.schedule.{}.plist", spec.name));
    std::fs::write(&path, plist).with_context(|| format!("writing {}", path.display()))?;
    println!("{}", path.display());
    eprintln!(
        "maskflow schedule: to start it: launchctl load {}",
        path.display()
    );
    Ok(())
}

/// Prints the task's XML, or registers it with `schtasks /Create /XML`.
#[cfg(windows)]
pub fn install_schtasks(spec: &UnitSpec, dry_run: bool) -> anyhow::Result<()> {
    let xml = maskflow_server::schedule_units::schtasks_xml(spec)?;
    if dry_run {
        print!("{xml}");
        return Ok(());
    }
    let path = std::env::temp_dir().join(format!("maskflow-{}.xml", spec.name));
    std::fs::write(&path, xml).with_context(|| format!("writing {}", path.display()))?;
    let status = std::process::Command::new("schtasks")
        .args(["/Create", "/F", "/TN"])
        .arg(format!("Maskflow\\{}", spec.name))
        .arg("/XML")
        .arg(&path)
        .status()
        .context("running schtasks")?;
    anyhow::ensure!(status.success(), "schtasks refused the task ({status})");
    Ok(())
}
