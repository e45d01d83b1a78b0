//! Interpreters this machine cannot run as they are: CPython from Debian's unstable suite (3.14,
//! 3.15), whose packages need a newer glibc than the host's, run inside a Debian root made by
//! debootstrap in the environments folder (`asynclab pythons add 3.14`).
//!
//! A root is `VENVS/roots/python3.14/` with the tree in `sid/` and `launch` beside it: a shell
//! script that runs a program inside the tree with the host's /proc, /dev and every host
//! top-level folder that is not a system folder of the root (/tmp, /work, /root, /home, a CI
//! checkout's /check, ...) at the same paths, in a private mount
//! namespace (`unshare --mount`, then `unshare --root --wd`: a chroot that keeps the working
//! directory). `launch` execs all the way down, so the worker
//! keeps the pid the driver started, and is measured from outside exactly as any other worker:
//! /proc, its process tree, RSS, CPU, the control pipe on fd 3.
//!
//! Inside the root, uv (the host's binary, copied in) builds the environment with the host's CA
//! bundle, which the package index's certificate needs. The environment's `bin/python` is then
//! a launcher on the host for the root's interpreter, so every other stage treats it like any
//! environment.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context;

/// The Debian suite the interpreters come from.
pub const SUITE: &str = "sid";
/// Debian's mirror (the registry this machine reaches).
pub const MIRROR: &str = "http://deb.debian.org/debian";
/// Where the host's CA bundle is copied inside a root.
pub const CA_IN_ROOT: &str = "/etc/ssl/asynclab-host-ca.crt";
/// The root's own top-level folders: every other top-level host folder is made visible inside
/// the root at the same path, so a checkout, its workloads and its environments are found
/// wherever they live.
pub const SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "sys",
    "usr", "var",
];
/// Minor versions Debian's unstable suite packages.
pub const VERSIONS: &[&str] = &["3.14", "3.15"];

/// A root's folder: `VENVS/roots/python3.14`.
pub fn dir(venvs: &Path, minor: &str) -> PathBuf {
    venvs.join("roots").join(format!("python{minor}"))
}

/// The tree inside a root's folder.
pub fn tree(venvs: &Path, minor: &str) -> PathBuf {
    dir(venvs, minor).join(SUITE)
}

/// The launcher of a root: `launch PROGRAM ARGS...` runs PROGRAM inside it.
pub fn launcher(venvs: &Path, minor: &str) -> PathBuf {
    dir(venvs, minor).join("launch")
}

/// The interpreter inside a root, as seen from inside it.
pub fn python_inside(minor: &str) -> String {
    format!("/usr/bin/python{minor}")
}

/// Whether the host path `path` is seen at the same path inside a root: it is absolute and
/// its top-level folder is not one of the root's own ([`SYSTEM_DIRS`]).
pub fn shared(path: &Path) -> bool {
    let mut parts = path.components();
    parts.next() == Some(std::path::Component::RootDir)
        && matches!(parts.next(), Some(std::path::Component::Normal(top))
            if !SYSTEM_DIRS.iter().any(|d| top == *d))
}

/// The launcher script for a tree at `tree`.
fn launcher_text(tree: &Path) -> String {
    let system = SYSTEM_DIRS.join("|");
    format!(
        r#"#!/bin/sh
# Made by `asynclab pythons add`: runs PROGRAM ARGS... inside the Debian {SUITE} root
# {tree}, with the host's /proc, /dev and every host top-level folder but the root's own
# ({system}) at the same paths, in a private mount namespace, in the same working
# directory; execs down to PROGRAM, which keeps this process's pid.
ROOT='{tree}'
if [ "$(id -u)" = 0 ]; then NS="--mount"; else NS="--user --map-root-user --mount"; fi
exec unshare $NS --propagation private -- /bin/sh -c '
ROOT=$1; shift
mount -t proc proc "$ROOT/proc" || exit 125
mount --rbind /dev "$ROOT/dev" || exit 125
for d in /*; do
  case "$d" in /{system_alt}) continue ;; esac
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  mkdir -p "$ROOT$d" && mount --rbind "$d" "$ROOT$d" || exit 125
done
exec unshare --root="$ROOT" --wd="$PWD" "$@"
' launch "$ROOT" "$@"
"#,
        tree = tree.display(),
        system_alt = SYSTEM_DIRS.join("|/"),
    )
}

fn need(tool: &str) -> anyhow::Result<()> {
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .any(|d| d.join(tool).is_file());
    if found {
        Ok(())
    } else {
        anyhow::bail!(
            "asynclab pythons add: {tool} not found; install it (apt-get install -y debootstrap util-linux coreutils)"
        )
    }
}

/// Whether `minor` names a version this module provides.
pub fn provides(minor: &str) -> bool {
    VERSIONS.contains(&minor)
}

/// Makes (or with `rebuild`, remakes) the root for `minor` (`3.14`) and returns its folder:
/// debootstrap of python{minor}, its venv module and CA certificates from Debian's unstable
/// suite, then uv and the host's CA bundle copied in, then the launcher. The tree is built
/// beside its final place and renamed there, so a failed build leaves nothing half made.
pub fn add(minor: &str, venvs: &Path, rebuild: bool) -> anyhow::Result<PathBuf> {
    if !provides(minor) {
        anyhow::bail!(
            "asynclab pythons add {minor}: only {} come from Debian's unstable suite; install other versions with pyenv or uv",
            VERSIONS.join(" and ")
        );
    }
    let folder = dir(venvs, minor);
    let final_tree = tree(venvs, minor);
    if final_tree
        .join(python_inside(minor).trim_start_matches('/'))
        .is_file()
        && !rebuild
    {
        write_launcher(venvs, minor)?;
        return Ok(folder);
    }
    for tool in ["debootstrap", "unshare", "chroot"] {
        need(tool)?;
    }
    std::fs::create_dir_all(&folder)
        .with_context(|| format!("cannot create {}", folder.display()))?;
    let building = folder.join(format!("{SUITE}.building"));
    if building.exists() {
        std::fs::remove_dir_all(&building)
            .with_context(|| format!("cannot remove {}", building.display()))?;
    }
    eprintln!(
        "asynclab: debootstrap of Debian {SUITE} with python{minor} into {} (about 45 s, 285 MB) ...",
        final_tree.display()
    );
    let include = format!("--include=python{minor},python{minor}-venv,ca-certificates");
    let out = Command::new("debootstrap")
        .args(["--variant=minbase", &include, SUITE])
        .arg(&building)
        .arg(MIRROR)
        .stdin(Stdio::null())
        .output()
        .context("cannot start debootstrap")?;
    if !out.status.success() {
        let log = String::from_utf8_lossy(&out.stdout);
        let last = log
            .lines()
            .rev()
            .find(|l| l.starts_with("E:") || l.starts_with("W:"));
        anyhow::bail!(
            "asynclab pythons add {minor}: debootstrap failed ({}); it needs root (or fakeroot) and {MIRROR}",
            last.unwrap_or("see its output").trim()
        );
    }
    let uv = super::find_uv(venvs).context(
        "asynclab pythons add: uv not found; run `make tools` (it installs uv under .venvs/.tools)",
    )?;
    std::fs::copy(&uv, building.join("usr/local/bin/uv"))
        .with_context(|| format!("cannot copy {} into the root", uv.display()))?;
    let ca = ca_bundle().context("asynclab pythons add: no CA bundle on the host (/etc/ssl/certs/ca-certificates.crt or $SSL_CERT_FILE); install ca-certificates")?;
    std::fs::copy(&ca, building.join(CA_IN_ROOT.trim_start_matches('/')))
        .with_context(|| format!("cannot copy {} into the root", ca.display()))?;
    if final_tree.exists() {
        std::fs::remove_dir_all(&final_tree)
            .with_context(|| format!("cannot remove the old {}", final_tree.display()))?;
    }
    std::fs::rename(&building, &final_tree)
        .with_context(|| format!("cannot move the root to {}", final_tree.display()))?;
    write_launcher(venvs, minor)?;
    Ok(folder)
}

/// The host's CA bundle: `$SSL_CERT_FILE`, else Debian's.
fn ca_bundle() -> Option<PathBuf> {
    std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from("/etc/ssl/certs/ca-certificates.crt")])
        .find(|p| p.is_file())
}

fn write_launcher(venvs: &Path, minor: &str) -> anyhow::Result<()> {
    let tree = std::path::absolute(tree(venvs, minor))?;
    let path = launcher(venvs, minor);
    std::fs::write(&path, launcher_text(&tree))
        .with_context(|| format!("cannot write {}", path.display()))?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// The roots made so far: (minor version, folder).
pub fn list(venvs: &Path) -> Vec<(String, PathBuf)> {
    VERSIONS
        .iter()
        .filter(|m| launcher(venvs, m).is_file() && tree(venvs, m).is_dir())
        .map(|m| (m.to_string(), dir(venvs, m)))
        .collect()
}

/// A command that runs `program` inside the root of `minor` with `SSL_CERT_FILE` set to the
/// copied CA bundle.
pub fn command_inside(venvs: &Path, minor: &str, program: &str) -> anyhow::Result<Command> {
    let launch = std::path::absolute(launcher(venvs, minor))?;
    let mut cmd = Command::new(launch);
    cmd.arg("/usr/bin/env")
        .arg(format!("SSL_CERT_FILE={CA_IN_ROOT}"))
        .arg("UV_CACHE_DIR=/tmp/asynclab-uv-cache")
        .arg(program);
    Ok(cmd)
}

/// The host-side `bin/python` of an environment built inside a root: runs the environment's
/// real interpreter (`bin/pythonX.Y`, a link to the root's) through the launcher.
pub fn env_launcher_text(launch: &Path, env_python: &Path) -> String {
    format!(
        "#!/bin/sh\n# Made by asynclab: this environment's interpreter runs inside the Debian root of {}.\nexec '{}' '{}' \"$@\"\n",
        launch.display(),
        launch.display(),
        env_python.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launcher_mounts_the_shared_folders_and_execs_into_the_root() {
        let text = launcher_text(Path::new("/v/roots/python3.14/sid"));
        assert!(text.starts_with("#!/bin/sh\n"));
        assert!(text.contains("ROOT='/v/roots/python3.14/sid'"));
        assert!(text.contains("exec unshare $NS --propagation private"));
        assert!(text.contains("exec unshare --root=\"$ROOT\" --wd=\"$PWD\" \"$@\""));
        assert!(text.contains("for d in /*; do"));
        assert!(text.contains("case \"$d\" in /bin|/boot|/dev|/etc|"));
        assert!(!provides("3.13") && provides("3.14"));
    }

    #[test]
    fn any_top_level_folder_but_the_roots_own_is_shared() {
        for p in [
            "/check/work/main/.venvs",
            "/tmp/x",
            "/work/main",
            "/root/.cache",
        ] {
            assert!(shared(Path::new(p)), "{p}");
        }
        for p in ["/usr/lib", "/etc/ssl", "/var/tmp", "relative/path", "/"] {
            assert!(!shared(Path::new(p)), "{p}");
        }
    }
}
