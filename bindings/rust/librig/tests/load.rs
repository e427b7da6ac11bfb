//! The loader and interop through the safe crate, on memory devices (and the CUDA double where meson's
//! binding-rust names it): a safetensors file and a checkpoint of two shards written here byte by byte,
//! loaded, and every tensor's bytes, dtype and shape checked, the checkpoint's shards and metadata too; points as descriptors; device pointers as buffers.
use librig::{Access, Buffer, Device, Dtype, Format, Interop, LoadFile, Memory, Part, Point, Rule, Status};
use std::fs::File;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// (name, safetensors dtype, shape, bytes) of the file the tests write, in name order.
fn tensors() -> Vec<(&'static str, &'static str, Vec<u64>, Vec<u8>)> {
    vec![
        ("a.weight", "F32", vec![2, 2], [1.0f32, 2.0, -3.5, 0.25].iter().flat_map(|f| f.to_le_bytes()).collect()),
        ("b.bias", "U8", vec![3], vec![7, 8, 9]),
        ("c.scale", "BF16", vec![1, 2, 1], vec![0x80, 0x3f, 0x00, 0x40]),
        ("d.empty", "I64", vec![0, 4], vec![]),
    ]
}

/// Writes the test's tensors as one safetensors file in the temporary directory.
fn write_safetensors(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("librig-{}-{}.safetensors", std::process::id(), name));
    write_safetensors_at(&path, &tensors(), "");
    path
}

/// Writes `tensors` as a safetensors file: 8-byte little-endian header length, the JSON header (with
/// `meta`, a JSON object, as `__metadata__` where it is not empty), the data.
fn write_safetensors_at(path: &Path, tensors: &[(&str, &str, Vec<u64>, Vec<u8>)], meta: &str) {
    let mut header = String::from("{");
    if !meta.is_empty() {
        write!(header, "\"__metadata__\":{}", meta).unwrap();
    }
    let mut data = Vec::new();
    for (n, dtype, shape, bytes) in tensors {
        let shape: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
        write!(
            header,
            "{}\"{}\":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
            if header.len() > 1 { "," } else { "" },
            n,
            dtype,
            shape.join(","),
            data.len(),
            data.len() + bytes.len()
        )
        .unwrap();
        data.extend_from_slice(bytes);
    }
    header += "}";
    let mut f = File::create(path).unwrap();
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    f.write_all(&data).unwrap();
}

/// The test's shards: the tensors two by two, as Hugging Face's save_pretrained names them.
const SHARDS: [&str; 2] = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"];

/// Writes the test's tensors as a checkpoint of two shards and its index in a new directory.
fn write_checkpoint(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("librig-{}-{}", std::process::id(), name));
    std::fs::create_dir_all(&dir).unwrap();
    let all = tensors();
    write_safetensors_at(&dir.join(SHARDS[0]), &all[..2], r#"{"format":"pt","shard":"first"}"#);
    write_safetensors_at(&dir.join(SHARDS[1]), &all[2..], r#"{"format":"pt"}"#);
    let total: usize = all.iter().map(|t| t.3.len()).sum();
    let map: Vec<String> = all.iter().enumerate().map(|(i, t)| format!("\"{}\":\"{}\"", t.0, SHARDS[i / 2])).collect();
    let index = format!(
        "{{\"metadata\":{{\"total_size\":{},\"note\":\"two shards\"}},\"weight_map\":{{{}}}}}",
        total,
        map.join(",")
    );
    std::fs::write(dir.join("model.safetensors.index.json"), index).unwrap();
    dir
}

/// A sharded checkpoint opens by its index and by its directory as one table: its shards, its metadata
/// (the index's own by key, numbers as JSON, then the first shard's keys not already there) and every
/// tensor's bytes on a memory device.
#[test]
fn a_checkpoint_of_two_shards_opens_by_its_index_and_its_directory() {
    let dir = write_checkpoint("checkpoint");
    let want = tensors();
    let dtypes = [Dtype::F32, Dtype::U8, Dtype::BF16, Dtype::I64];
    let want_meta: Vec<(String, String)> =
        [("note", "two shards"), ("total_size", "23"), ("format", "pt"), ("shard", "first")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
    for path in [dir.join("model.safetensors.index.json"), dir.clone()] {
        let file = LoadFile::open(&path).unwrap();
        assert_eq!(file.format().unwrap(), Format::Safetensors);
        let shards = file.shards().unwrap();
        assert_eq!(shards.len(), SHARDS.len(), "{:?}", shards);
        for (s, name) in shards.iter().zip(SHARDS) {
            assert_eq!(s.path.file_name().unwrap(), name, "{:?}", s);
            assert_eq!(s.bytes, std::fs::metadata(dir.join(name)).unwrap().len(), "{:?}", s);
        }
        assert_eq!(file.metadata().unwrap(), want_meta, "{:?}", path);
        let listed = file.tensors().unwrap();
        assert_eq!(listed.len(), want.len());
        for (i, (t, (name, dtype, shape, _))) in listed.iter().zip(&want).enumerate() {
            assert_eq!((t.name.as_str(), t.dtype, t.dtype_name.as_str(), &t.shape), (*name, dtypes[i], *dtype, shape));
            assert_eq!(t.shard, i / 2, "{}", name);
        }
        let a = Device::memory("A").unwrap();
        let load = file.load(&[&a], Rule::Each).unwrap();
        load.wait().unwrap();
        for (i, (name, _, _, bytes)) in want.iter().enumerate() {
            assert_eq!(&load.buffer(i, 0).unwrap().to_vec().unwrap(), bytes, "{} from {:?}", name, path);
        }
    }
    // a shard missing: NOT_FOUND naming it
    std::fs::remove_file(dir.join(SHARDS[1])).unwrap();
    let e = LoadFile::open(&dir).unwrap_err();
    assert_eq!(e.status, Status::NOT_FOUND, "{}", e);
    assert!(e.message.contains(SHARDS[1]), "{}", e);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_safetensors_file_loads_onto_two_memory_devices() {
    let path = write_safetensors("load");
    let file = LoadFile::open(&path).unwrap();
    let listed = file.tensors().unwrap();
    let want = tensors();
    assert_eq!(listed.len(), want.len());
    let dtypes = [Dtype::F32, Dtype::U8, Dtype::BF16, Dtype::I64];
    for (i, (t, (name, dtype, shape, bytes))) in listed.iter().zip(&want).enumerate() {
        assert_eq!(t.name, *name);
        assert_eq!(t.dtype, dtypes[i], "{}", name);
        assert_eq!(t.dtype_name, *dtype);
        assert_eq!(&t.shape, shape, "{}", name);
        assert_eq!(t.length, bytes.len() as u64);
        assert_eq!(file.find(name).unwrap(), i);
    }
    let (a, b) = (Device::memory("A").unwrap(), Device::memory("B").unwrap());
    let load = file.load(&[&a, &b], Rule::Each).unwrap();
    load.wait().unwrap();
    for (i, (name, _, _, bytes)) in want.iter().enumerate() {
        for d in 0..2 {
            let buf = load.buffer(i, d).unwrap();
            assert_eq!(&buf.to_vec().unwrap(), bytes, "{} on device {}", name, d);
            // the tensor's buffer carries the load's copy as its last write (none for an empty tensor)
            assert_eq!(buf.last_write().unwrap() == Point::NONE, bytes.is_empty(), "{}", name);
        }
    }
    assert_eq!(load.buffer(0, 2).unwrap_err().status, Status::INVALID_ARGUMENT);
    assert_eq!(file.find("missing").unwrap_err().status, Status::NOT_FOUND);
    assert_eq!(file.load(&[], Rule::Each).unwrap_err().status, Status::INVALID_ARGUMENT);
    assert_eq!(file.tensor(99).unwrap_err().status, Status::INVALID_ARGUMENT);
    drop(load);
    drop(file);
    std::fs::remove_file(&path).unwrap();
}

/// Writes a GGUF v3 file by hand: keys in no sorted order (a string, a u32, a string), one F32 tensor of
/// ne [4, 2] at offset 0, the data aligned to GGUF's default 32 bytes.
fn write_gguf(name: &str, data: &[u8]) -> PathBuf {
    fn str(b: &mut Vec<u8>, s: &str) {
        b.extend_from_slice(&(s.len() as u64).to_le_bytes());
        b.extend_from_slice(s.as_bytes());
    }
    let mut b = b"GGUF".to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&1u64.to_le_bytes()); // tensors
    b.extend_from_slice(&3u64.to_le_bytes()); // key/values
    str(&mut b, "general.architecture");
    b.extend_from_slice(&8u32.to_le_bytes());
    str(&mut b, "llama");
    str(&mut b, "llama.block_count");
    b.extend_from_slice(&4u32.to_le_bytes());
    b.extend_from_slice(&2u32.to_le_bytes());
    str(&mut b, "a.note");
    b.extend_from_slice(&8u32.to_le_bytes());
    str(&mut b, "after the others");
    str(&mut b, "tok.w");
    b.extend_from_slice(&2u32.to_le_bytes());
    for ne in [4u64, 2] {
        b.extend_from_slice(&ne.to_le_bytes());
    }
    b.extend_from_slice(&0u32.to_le_bytes()); // F32
    b.extend_from_slice(&0u64.to_le_bytes());
    b.resize((b.len() + 31) / 32 * 32, 0);
    b.extend_from_slice(data);
    let path = std::env::temp_dir().join(format!("librig-{}-{}.gguf", std::process::id(), name));
    std::fs::write(&path, b).unwrap();
    path
}

/// A GGUF file's metadata keeps the file's key order (a Vec, not a map), numbers in decimal.
#[test]
fn a_gguf_files_metadata_keeps_its_key_order() {
    let data: Vec<u8> = (1..=8).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let path = write_gguf("order", &data);
    let file = LoadFile::open(&path).unwrap();
    assert_eq!(file.format().unwrap(), Format::Gguf);
    let want = [("general.architecture", "llama"), ("llama.block_count", "2"), ("a.note", "after the others")];
    let meta = file.metadata().unwrap();
    assert_eq!(meta.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect::<Vec<_>>(), want);
    let shards = file.shards().unwrap();
    assert_eq!(shards, [librig::Shard { path: path.clone(), bytes: std::fs::metadata(&path).unwrap().len() }]);
    let t = file.tensor(0).unwrap();
    assert_eq!((t.name.as_str(), t.dtype, &t.shape[..], t.shard), ("tok.w", Dtype::F32, &[2u64, 4][..], 0));
    let a = Device::memory("A").unwrap();
    let load = file.load(&[&a], Rule::Each).unwrap();
    load.wait().unwrap();
    assert_eq!(load.buffer(0, 0).unwrap().to_vec().unwrap(), data);
    drop(load);
    drop(file);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn bad_files_answer_with_rigs_message() {
    let e = LoadFile::open("/nonexistent/librig.safetensors").unwrap_err();
    assert_eq!(e.status, Status::NOT_FOUND, "{}", e);
    let path = std::env::temp_dir().join(format!("librig-{}-truncated.safetensors", std::process::id()));
    std::fs::write(&path, [200u8, 0, 0, 0, 0, 0, 0, 0, b'{']).unwrap();
    let e = LoadFile::open(&path).unwrap_err();
    assert_eq!(e.status, Status::INVALID_ARGUMENT, "{}", e);
    assert!(!e.message.is_empty());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_points_descriptor_is_readable_once_reached() {
    let a = Device::memory("A").unwrap();
    assert!(a.supports(Interop::HostFd).unwrap());
    let x = Buffer::from_vec(vec![5u8; 16]).unwrap();
    let y = Buffer::create(&a, 16, Memory::Device).unwrap();
    let p = librig::submit(&a, vec![Part::copy(0, 1)], &[(&x.borrow_on(&a).unwrap(), Access::Read), (&y, Access::Write)]).unwrap();
    assert_ne!(p, Point::NONE);
    // an eventfd: a read returns its counter (non-zero) once the point is reached; a memory device's
    // work ran inline, so this read does not block
    let mut counter = [0u8; 8];
    File::from(p.fd().unwrap()).read_exact(&mut counter).unwrap();
    assert_ne!(u64::from_ne_bytes(counter), 0);
    File::from(Point::NONE.fd().unwrap()).read_exact(&mut counter).unwrap();
    assert_eq!(y.last_write().unwrap(), p);
    // memory devices have no sync files or timeline semaphores: rig says so
    assert!(!a.supports(Interop::SyncFd).unwrap());
    assert_eq!(p.export_sync_fd().unwrap_err().status, Status::UNSUPPORTED);
    assert_eq!(p.export_semaphore_fd().unwrap_err().status, Status::UNSUPPORTED);
    assert_eq!(a.import_sync_fd(None).unwrap_err().status, Status::UNSUPPORTED);
}

fn required(backend: &str) -> bool {
    std::env::var("RIG_REQUIRE").map_or(false, |r| r.split(|c| c == ',' || c == '+').any(|b| b == backend))
}

/// A sync file of a Vulkan point, imported again on the same device: where vulkan:0 has no sync files
/// (lavapipe), the calls must answer UNSUPPORTED; RIG_REQUIRE=vulkan makes only a missing vulkan:0 a failure.
#[test]
fn a_vulkan_point_leaves_and_returns_as_a_sync_file() {
    let v = match Device::open("vulkan:0") {
        Ok(v) => v,
        Err(e) => {
            assert!(!required("vulkan"), "RIG_REQUIRE names vulkan: {}", e);
            println!("SKIP: no vulkan:0 ({})", e);
            return;
        }
    };
    let x = Buffer::create(&v, 64, Memory::Device).unwrap();
    let y = Buffer::create(&v, 64, Memory::Device).unwrap();
    let p = librig::submit(&v, vec![Part::copy(0, 1)], &[(&x, Access::Read), (&y, Access::Write)]).unwrap();
    if !v.supports(Interop::SyncFd).unwrap() {
        // RIG_REQUIRE asks for the backend, not each optional extension of it (lavapipe has no sync files):
        // the device says so and the call must answer UNSUPPORTED.
        let e = p.export_sync_fd().unwrap_err();
        assert_eq!(e.status, Status::UNSUPPORTED, "{}", e);
        println!("SKIP: vulkan:0 has no sync files: {}", e);
        return;
    }
    let fd = p.export_sync_fd().unwrap();
    let q = v.import_sync_fd(fd.as_ref().map(std::os::unix::io::AsFd::as_fd)).unwrap();
    librig::wait_point(q, None).unwrap();
    librig::wait_point(p, Some(std::time::Duration::ZERO)).unwrap();
}

#[test]
fn host_memory_wrapped_as_a_memory_devices_pointer() {
    let a = Device::memory("A").unwrap();
    assert!(a.supports(Interop::DevicePointer).unwrap());
    let bytes: &'static mut [u8] = Box::leak(b"device bytes".to_vec().into_boxed_slice());
    let address = bytes.as_ptr() as u64;
    let (tx, rx) = std::sync::mpsc::channel();
    let buf = unsafe { Buffer::wrap_device(&a, address, bytes.len(), move || tx.send(()).unwrap()) }.unwrap();
    assert_eq!(buf.device_address().unwrap(), address);
    assert_eq!(buf.to_vec().unwrap(), b"device bytes");
    assert_eq!(buf.view(7, 5).unwrap().device_address().unwrap(), address + 7);
    drop(buf);
    rx.recv_timeout(std::time::Duration::from_secs(10)).expect("the wrap's release ran");
    let e = unsafe { Buffer::wrap_device(&a, 0, 16, || {}) }.unwrap_err();
    assert_eq!(e.status, Status::INVALID_ARGUMENT, "{}", e);
}

/// A CUDA device pointer (the double's, where meson names RIG_CUDA_LIBRARY; a GPU's under RIG_REQUIRE=cuda)
/// wrapped again as a buffer sees the bytes written through the first.
#[test]
fn a_cuda_pointer_wrapped_sees_the_same_bytes() {
    let d = match Device::open("cuda:0") {
        Ok(d) => d,
        Err(e) => {
            assert!(!required("cuda"), "RIG_REQUIRE names cuda: {}", e);
            println!("SKIP: no cuda:0 ({})", e);
            return;
        }
    };
    let x = Buffer::create(&d, 8, Memory::Device).unwrap();
    x.write_from(0, b"cuda ptr").unwrap();
    let address = x.device_address().unwrap();
    assert_ne!(address, 0);
    let y = unsafe { Buffer::wrap_device(&d, address, 8, || {}) }.unwrap();
    assert_eq!(y.device_address().unwrap(), address);
    assert_eq!(y.to_vec().unwrap(), b"cuda ptr");
    drop(y);
    drop(x);
}
