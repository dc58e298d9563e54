//! Build script: the commit the binary is built from, for `hermes-e2e --version`
//! (`HERMES_E2E_COMMIT`: `git rev-parse --short=12 HEAD`; `unknown (not built from a git
//! checkout)` outside git or without git). It reruns when HEAD moves (a commit, a checkout).

use std::path::PathBuf;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(commit) => {
            // Rebuilt when HEAD moves: HEAD itself (a checkout) and the branch it points to (a
            // commit), wherever this worktree keeps them.
            let mut files = vec!["HEAD".to_owned()];
            files.extend(git(&["symbolic-ref", "-q", "HEAD"]));
            for file in files {
                // Only files that exist (a packed ref has none): cargo reruns the script on
                // every build for a file that does not.
                let path = git(&["rev-parse", "--git-path", &file]).map(PathBuf::from);
                if let Some(path) = path.filter(|p| p.exists()) {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
            commit
        }
        None => "unknown (not built from a git checkout)".to_owned(),
    };
    println!("cargo:rustc-env=HERMES_E2E_COMMIT={commit}");
}
