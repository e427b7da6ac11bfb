// librig's libdir (pkg-config) as this program's RUNPATH: an installed prefix the dynamic linker does
// not search by itself, so the program runs without LD_LIBRARY_PATH.
fn main() {
    let out = std::process::Command::new("pkg-config").args(["--variable=libdir", "rig"]).output().unwrap();
    assert!(out.status.success(), "pkg-config does not know rig: set PKG_CONFIG_PATH");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{}", String::from_utf8_lossy(&out.stdout).trim());
}
