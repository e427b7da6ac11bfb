//! The loader (rig_load.h): a weights file's tensors, typed, and a load of them onto devices.
use super::*;
use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// A tensor's element type (rig_dtype). GGUF's block-quantized types are `Ggml(type number)`; `Other` keeps
/// a value added to rig after this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    U8,
    I8,
    Bool,
    F8E4M3,
    F8E5M2,
    U16,
    I16,
    F16,
    BF16,
    U32,
    I32,
    F32,
    U64,
    I64,
    F64,
    Ggml(u32),
    Other(u32),
}

impl Dtype {
    fn from_raw(dtype: u32, ggml_type: u32) -> Dtype {
        const PLAIN: [Dtype; 15] = [
            Dtype::U8, Dtype::I8, Dtype::Bool, Dtype::F8E4M3, Dtype::F8E5M2, Dtype::U16, Dtype::I16, Dtype::F16,
            Dtype::BF16, Dtype::U32, Dtype::I32, Dtype::F32, Dtype::U64, Dtype::I64, Dtype::F64,
        ];
        match dtype {
            sys::rig_dtype_RIG_DTYPE_GGML => Dtype::Ggml(ggml_type),
            d if (1..=15).contains(&d) => PLAIN[d as usize - 1],
            d => Dtype::Other(d),
        }
    }
}

/// One tensor of a file (rig_load_tensor), its strings copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub name: String,
    pub dtype: Dtype,
    /// The file's own name of the type ("BF16", "Q4_K").
    pub dtype_name: String,
    /// Outermost first.
    pub shape: Vec<u64>,
    /// Absolute byte offset of the tensor's bytes in its file (its shard's).
    pub offset: u64,
    pub length: u64,
    /// The checkpoint's file that holds it (an index into `LoadFile::shards`); 0 for a single file.
    pub shard: usize,
}

/// What a weights file is (rig_load_format); `Other` keeps a value added to rig after this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Safetensors,
    Gguf,
    /// Byte ranges of any file (rig_load_open_raw).
    Raw,
    Other(u32),
}

/// One file of a checkpoint (rig_load_shard_get): its path as rig opened it and its size then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shard {
    pub path: PathBuf,
    pub bytes: u64,
}

/// An open weights file and its tensor table (rig_load_file); released on Drop.
#[derive(Debug)]
pub struct LoadFile {
    raw: sys::rig_load_file,
}

unsafe impl Send for LoadFile {}
unsafe impl Sync for LoadFile {}

/// Which tensor goes to which device (rig_load_rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Every tensor on every device.
    Each,
    /// A name's first ".N." number is its layer; layers split into contiguous blocks over the devices.
    ByLayer,
}

impl LoadFile {
    /// Opens a checkpoint and reads its tensor table, one table over all its files: a safetensors or GGUF
    /// file (by its first bytes), a sharded safetensors checkpoint by its `*.index.json` or the directory
    /// holding it, or the first file of a split GGUF set. Waits for the reads. `NOT_FOUND` where the file
    /// or a shard does not exist, `INVALID_ARGUMENT` naming what is wrong (a tensor in two shards ...).
    pub fn open(path: impl AsRef<Path>) -> Result<LoadFile> {
        let p = cstring(path.as_ref().to_str().ok_or_else(|| Error::new(Status::INVALID_ARGUMENT, "a path that is not UTF-8"))?)?;
        let raw = out_handle(|o| unsafe { sys::rig_load_open(p.as_ptr(), sys::rig_load_format_RIG_LOAD_FORMAT_AUTO, o) })?;
        Ok(LoadFile { raw })
    }

    /// The tensors, in rig's index order (a safetensors file's by name). Pure read.
    pub fn tensors(&self) -> Result<Vec<Tensor>> {
        let count = out_handle(|o| unsafe { sys::rig_load_tensor_count(self.raw, o) })?;
        (0..count).map(|i| self.tensor(i)).collect()
    }

    /// Tensor `index`'s description; `INVALID_ARGUMENT` past the count. Pure read.
    pub fn tensor(&self, index: usize) -> Result<Tensor> {
        let mut t: sys::rig_load_tensor = unsafe { std::mem::zeroed() };
        t.size = std::mem::size_of::<sys::rig_load_tensor>();
        check(unsafe { sys::rig_load_tensor_get(self.raw, index, &mut t) })?;
        let rank = (t.rank as usize).min(t.shape.len());
        Ok(Tensor {
            name: unsafe { owned_str(t.name) },
            dtype: Dtype::from_raw(t.dtype, t.ggml_type),
            dtype_name: unsafe { owned_str(t.dtype_name) },
            shape: t.shape[..rank].to_vec(),
            offset: t.offset,
            length: t.length,
            shard: t.shard,
        })
    }

    /// What the file is (what rig found by its first bytes). Pure read.
    pub fn format(&self) -> Result<Format> {
        let f = out_handle(|o| unsafe { sys::rig_load_file_format(self.raw, o) })?;
        Ok(match f {
            sys::rig_load_format_RIG_LOAD_FORMAT_SAFETENSORS => Format::Safetensors,
            sys::rig_load_format_RIG_LOAD_FORMAT_GGUF => Format::Gguf,
            sys::rig_load_format_RIG_LOAD_FORMAT_RAW => Format::Raw,
            other => Format::Other(other),
        })
    }

    /// The files the checkpoint reads: one for a single file, a sharded checkpoint's in name order, a
    /// split GGUF set's in split order. Pure read.
    pub fn shards(&self) -> Result<Vec<Shard>> {
        let count = out_handle(|o| unsafe { sys::rig_load_shard_count(self.raw, o) })?;
        (0..count)
            .map(|i| {
                let (mut path, mut bytes) = (ptr::null(), 0u64);
                check(unsafe { sys::rig_load_shard_get(self.raw, i, &mut path, &mut bytes) })?;
                // the path lives as long as the file handle: copied now, as the bytes rig holds
                let path = if path.is_null() { &[][..] } else { unsafe { CStr::from_ptr(path) }.to_bytes() };
                Ok(Shard { path: PathBuf::from(OsStr::from_bytes(path)), bytes })
            })
            .collect()
    }

    /// The file's metadata as (key, value) pairs in rig's order: safetensors' `__metadata__` strings by
    /// key; a sharded checkpoint's index "metadata" (other values as JSON), then its first shard's keys
    /// not already there; GGUF's key/values in file order (numbers in decimal, short arrays as JSON).
    /// Values that are not UTF-8 (a GGUF string may hold any bytes) are read lossily. Pure read.
    pub fn metadata(&self) -> Result<Vec<(String, String)>> {
        let count = out_handle(|o| unsafe { sys::rig_load_metadata_count(self.raw, o) })?;
        (0..count)
            .map(|i| {
                let (mut key, mut value) = (ptr::null(), ptr::null());
                check(unsafe { sys::rig_load_metadata_get(self.raw, i, &mut key, &mut value) })?;
                Ok(unsafe { (owned_str(key), owned_str(value)) })
            })
            .collect()
    }

    /// The index of the tensor called `name`; `NOT_FOUND` if none. Pure read.
    pub fn find(&self, name: &str) -> Result<usize> {
        let n = cstring(name)?;
        out_handle(|o| unsafe { sys::rig_load_find(self.raw, n.as_ptr(), o) })
    }

    /// Starts loading every tensor onto `devices` by `rule` (default options) and returns the running
    /// load at once; waits only for the verdicts (and a probe where one runs), holding no lock of rig's.
    pub fn load(&self, devices: &[&Device], rule: Rule) -> Result<Load> {
        let raws: Vec<sys::rig_device> = devices.iter().map(|d| d.raw).collect();
        let mut placement: sys::rig_load_placement = unsafe { std::mem::zeroed() };
        placement.size = std::mem::size_of::<sys::rig_load_placement>();
        placement.devices = raws.as_ptr();
        placement.device_count = raws.len();
        placement.rule = match rule {
            Rule::Each => sys::rig_load_rule_RIG_LOAD_RULE_EACH,
            Rule::ByLayer => sys::rig_load_rule_RIG_LOAD_RULE_BY_LAYER,
        };
        let raw = out_handle(|o| unsafe { sys::rig_load_start(self.raw, ptr::null(), 0, &placement, ptr::null(), o) })?;
        Ok(Load { raw })
    }
}

impl Drop for LoadFile {
    fn drop(&mut self) {
        unsafe { sys::rig_load_file_release(self.raw) };
    }
}

/// One load, running or finished (rig_load). Drop cancels it if running and waits for its threads;
/// buffers handed out stay valid.
#[derive(Debug)]
pub struct Load {
    raw: sys::rig_load,
}

unsafe impl Send for Load {}
unsafe impl Sync for Load {}

impl Load {
    /// Waits on the host (no lock held) until every copy is submitted; the devices may still be copying
    /// (the tensors' stamps order that). The load's error where it failed.
    pub fn wait(&self) -> Result<()> {
        check(unsafe { sys::rig_load_wait(self.raw) })
    }

    /// Tensor `index` on the placement's device at `device` (its position in the slice given to
    /// `LoadFile::load`): a buffer whose stamps carry the copies into it. Waits until those are submitted.
    pub fn buffer(&self, index: usize, device: usize) -> Result<Buffer<'static>> {
        let raw = out_handle(|o| unsafe { sys::rig_load_buffer(self.raw, index, device, o) })?;
        Ok(Buffer::made(raw, None))
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        unsafe { sys::rig_load_release(self.raw) };
    }
}
