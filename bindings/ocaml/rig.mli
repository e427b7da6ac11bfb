(** rig orders the work of several devices (CUDA, HIP and Vulkan GPUs, and host memory devices) by the
    memory that work uses: a submit follows the points its buffers' stamps name, so a program never names
    an event or a fence. This is the OCaml face of librig's C ABI ([rig.h]), through ctypes.

    One error style: every call that fails raises {!Error} with rig's status and message (a callback's own
    exception is raised instead, once rig has returned). Objects own their handles: [release] releases
    one (the GC's finaliser does so for one dropped unreleased); a released object keeps its stale handle,
    so a later use raises rig's own [Invalid_handle]. Timeouts are in seconds.

    librig is loaded at run time: [RIG_LIBRARY] names the file where set, else the libdir this package was
    built for, else the dynamic linker's search for [librig.so.0]. *)

(** Bytes outside OCaml's moving heap, which C sees without a copy. *)
type host = (char, Bigarray.int8_unsigned_elt, Bigarray.c_layout) Bigarray.Array1.t

(** {1 Statuses and errors} *)

module Status : sig
  (** rig_status; [Other] for a status added after this binding. *)
  type t =
    | Ok
    | Invalid_argument
    | Invalid_handle
    | Unsupported
    | Unmappable
    | Out_of_memory
    | Lost
    | Timeout
    | Interrupted
    | Driver
    | Not_found
    | Busy
    | Other of int

  val of_int : int -> t
  (** The status of rig.h's pinned value. *)

  val to_int : t -> int

  val name : t -> string
  (** rig's name: ["RIG_TIMEOUT"]. *)

  val pp : Format.formatter -> t -> unit
end

type status = Status.t

exception Error of { status : Status.t; name : string; message : string }
(** A failed rig call: its status, rig's name of it, and [rig_last_error()] of that call. *)

val version : unit -> string
(** rig's run-time version, ["MAJOR.MINOR.PATCH"]. *)

(** {1 Points} *)

(** A point (rig_point): a value on one device's timeline, what a submit returns and waits take. Private:
    an [int64] (a timeline value, {!Device.submitted}) is refused by the type checker where a point is
    meant; [(p :> int64)] reads one as rig's packed integer. *)
module Point : sig
  type t = private int64

  val none : t
  (** The zero point, reached at once. *)

  val device_index : t -> int
  (** The index of the device whose timeline the point is on (0 for [none]). *)

  val value : t -> int64
  (** The point's value on that timeline. *)

  val to_string : t -> string
  (** ["device#INDEX:VALUE"], or ["none"]. *)

  val pp : Format.formatter -> t -> unit
end

(** {1 Devices} *)

module Device : sig
  type t

  val host : unit -> t
  (** The host as a device (runs no work; never released by rig). *)

  val memory : string -> t
  (** A new memory device of that name: host memory, work runs before submit returns. *)

  val open_ : string -> t
  (** A driver's device: ["cuda:0"], ["hip:1"], ["vulkan:0"]. *)

  val release : t -> unit
  (** Waits for the device's work and releases it. *)

  val submitted : t -> int64
  (** The last value given on the device's timeline. *)

  val signaled : t -> int64
  (** The last value the device reached (commits nothing). *)

  val wait : ?timeout:float -> t -> Point.t -> unit
  (** Waits until the device reached the point, committing its held work first; [timeout] in seconds
      (none: no bound; 0: only checks). Raises [Timeout]; [Invalid_argument] for a point of another
      device ({!wait_point} waits for any device's). *)


  type info = {
    name : string;
    framework : string;
    model : string;
    kind : int;
    index : int;
    memory_bytes : int64;
    integrated : int;
    lost : bool;
  }

  val info : t -> info

  val point : t -> int64 -> Point.t
  (** The point of a value (1..submitted) of this device. *)

  val lost_reason : t -> string option
  (** Why the device was lost; [None] while it is not. *)
end

val memory_device : string -> Device.t
(** [Device.memory]. *)

val device_list : unit -> string list
(** The names {!Device.open_} accepts here. *)

val wait_point : ?timeout:float -> Point.t -> unit
(** Waits for a point of any device ([timeout] as {!Device.wait}). *)

val interrupt_waits : bool -> unit
(** Makes every wait in progress, and every later one until [interrupt_waits false], raise
    [Interrupted]. *)

(** {1 Buffers} *)

module Buffer : sig
  type t

  val create : ?memory:int -> Device.t -> int -> t
  (** A new allocation of that many bytes on the device ([memory]: 0 device, 1 pinned, 2 mapped). *)

  val of_bigarray : ?read_only:bool -> host -> t
  (** A host buffer over the Bigarray's bytes, without a copy; held until rig lets go of it. *)

  val of_string : string -> t
  (** A host buffer over a copy of the string. *)

  val view : t -> offset:int -> length:int -> t
  (** Bytes [\[offset, offset+length)]: same allocation and stamps. *)

  val borrow : Device.t -> t -> t
  (** The buffer's bytes seen by the device, sharing their stamps. Raises [Unmappable] where the device
      cannot reach that memory. *)

  val length : t -> int
  val release : t -> unit

  val read_into : t -> offset:int -> host -> unit
  (** Copies out after the last write (rule 5). *)

  val write_from : t -> offset:int -> host -> unit
  (** Copies in after every use (rule 6). *)

  val to_string : t -> string

  val export : t -> host
  (** The bytes in place, ordered only as of this call (rig.h, rig_buffer_export). *)

  val read : t -> (host -> unit) -> unit
  (** Runs the function over the bytes after the last write; the Bigarray is valid only during it. *)

  val write : t -> (host -> unit) -> unit
  (** Runs the function over the bytes after every use; its writes land in the buffer. *)
end

(** {1 Submissions} *)

(** How a submission's slot uses its buffer (rig_access). *)
type access = Read | Write | Read_write

module Module : sig
  type t

  val ptx : int
  val cubin : int
  val spirv : int
  val hip_code_object : int

  val load : Device.t -> int -> string -> t
  (** Loads device code (its bytes) of a format above on the device. *)

  val release : t -> unit
end

module Submission : sig
  type slot = int

  type part_spec =
    | Copy of { src : slot; dst : slot; src_offset : int; dst_offset : int; length : int option }
    | Fill of { dst : slot; offset : int; length : int option; byte : char }
    | Host_kernel of (host array -> unit)
        (** runs on a memory device over every slot's bytes (valid only during the call); its exception
            is raised by the submit that ran it *)
    | Launch of {
        modul : Module.t;
        fn_name : string;
        grid : int * int * int;
        block : int * int * int;
        shared_bytes : int;
        launch_slots : slot list;
      }  (** a GPU kernel: its parameters are the device addresses of launch_slots, then the scalars *)

  val copy : ?src_offset:int -> ?dst_offset:int -> ?length:int -> src:slot -> dst:slot -> unit -> part_spec
  val fill : ?offset:int -> ?length:int -> dst:slot -> char -> part_spec

  type t

  val make : Device.t -> part_spec list -> access list -> t
  val release : t -> unit
end

module Run : sig
  type t

  val take : Submission.t -> t
  val set_buffer : t -> int -> Buffer.t -> unit
  val set_scalars : t -> string -> unit

  val submit : ?waits:Point.t list -> t -> Point.t
  (** Submits after the waits; returns the run's point. *)

  val release : t -> unit
end

val submit : Device.t -> Submission.part_spec list -> (Buffer.t * access) list -> Point.t
(** Makes, takes and submits in one call; returns the point. *)

(** {1 Verdicts of mapped registration} *)

type refusal =
  | Integrated_gpu
  | Device_kind_unknown
  | Kernel_hazard of string
  | Not_measured of string
  | Wrong_bytes
  | Other_refusal of int  (** a refusal added after this binding *)

type verdict =
  | Usable
  | Not_needed of string
  | Refused of refusal
  | Too_slow of string
  | Inconclusive of string
  | Still_registered of string
  | Other of int  (** a kind added after this binding *)

type answer = { verdict : verdict; text : string; cacheable : bool }
(** A verdict read whole, with its one-line text and whether it may be cached. *)

(** The self-test's ways to talk to a device. An op's exception makes the verdict Inconclusive (its text
    goes to the log), except [Out_of_memory], [Stack_overflow] and [Sys.Break], which the probe raises. *)
type ops = {
  register : host -> unit;
  unregister : host -> unit;
  alloc_host : int -> host;
  free_host : host -> unit;
  round_trip : host -> into:host -> unit;
  upload : host -> unit;
}

val probe_with : ?log:(string -> unit) -> ?min_relative_speed:float -> ops -> map:host -> reference:host -> answer
val probe : ?log:(string -> unit) -> ?min_relative_speed:float -> Device.t -> map:host -> reference:host -> answer

val static_verdict : Device.t -> answer option
(** The static verdict; [None] when the self-test is required. *)

val static_verdict_for : ?facts:(int -> int) -> string -> kind:int -> answer option
(** The static table for a bare framework name; [facts] answers its questions (1 yes, 0 no, -1 could
    not be read). [None] when the self-test is required. *)

val fact_integrated : int
val fact_pageable_uses_host_page_tables : int
val device_gpu : int

val host_register : Device.t -> host -> access:access -> unit
(** Registers the bytes with the device's driver through rig's range table; they must stay mapped until
    {!host_unregister} succeeds. *)

val host_unregister : Device.t -> host -> unit
val host_is_registered : host -> bool

(** {1 The loader (rig_load.h)} *)

(** A tensor's element type (rig_dtype); GGUF's block-quantized types are [Ggml] of the ggml type number;
    [Other] keeps a value added to rig after this binding. *)
module Dtype : sig
  type t =
    | U8 | I8 | Bool | F8_e4m3 | F8_e5m2 | U16 | I16 | F16 | Bf16 | U32 | I32 | F32 | U64 | I64 | F64
    | Ggml of int
    | Other of int

  val to_string : t -> string
  (** Safetensors' name (["BF16"]). *)
end

module Load : sig
  type file
  (** An open weights file and its tensor table (rig_load_file). *)

  type tensor = {
    name : string;
    dtype : Dtype.t;
    dtype_name : string;  (** the file's own name of the type (["BF16"], ["Q4_K"]) *)
    shape : int64 list;  (** outermost first *)
    offset : int64;  (** absolute byte offset of the tensor's bytes in its file (its shard's) *)
    length : int64;
    shard : int;  (** the checkpoint's file that holds it (an index into [shards]); 0 for a single file *)
  }

  (** What a weights file is (rig_load_format); [Other] keeps a value added to rig after this binding. *)
  type format = Safetensors | Gguf | Raw  (** byte ranges of any file *) | Other of int

  type shard = { path : string;  (** as rig opened it *) bytes : int64  (** its size then *) }
  (** One file of a checkpoint (rig_load_shard_get). *)

  val open_file : string -> file
  (** Opens a checkpoint and reads its tensor table, one table over all its files: a safetensors or GGUF
      file (told apart by its first bytes), a sharded safetensors checkpoint by its [*.index.json] or the
      directory holding it, or the first file of a split GGUF set; waits for the reads. Raises [Not_found]
      where the file or a shard does not exist, [Invalid_argument] naming what is wrong. *)

  val format : file -> format
  (** What the file is (what rig found by its first bytes). Pure read. *)

  val shards : file -> shard list
  (** The files the checkpoint reads: one for a single file, a sharded checkpoint's in name order, a split
      GGUF set's in split order. Pure read. *)

  val metadata : file -> (string * string) list
  (** The file's metadata as (key, value) pairs in rig's order: safetensors' [__metadata__] strings by key;
      a sharded checkpoint's index ["metadata"] (other values as JSON), then its first shard's keys not
      already there; GGUF's key/values in file order (numbers in decimal, short arrays as JSON). Pure read. *)

  val tensors : file -> tensor list
  (** The tensors in rig's index order (a safetensors file's by name). Pure read. *)

  val tensor : file -> int -> tensor
  val find : file -> string -> int
  (** The index of the tensor of that name; raises [Not_found] if none. *)

  val release_file : file -> unit
  (** Releases the file; loads still running keep it open until they end. *)

  (** Which tensor goes to which device (rig_load_rule). *)
  type rule = Each  (** every tensor on every device *) | By_layer  (** layers in blocks over the devices *)

  type t
  (** One load, running or finished (rig_load). *)

  val start : ?rule:rule -> file -> Device.t list -> t
  (** Starts loading every tensor onto the devices ([rule]: [Each]) and returns at once; waits only for
      the devices' verdicts (and a probe where one runs), holding no lock of rig's. *)

  val wait : t -> unit
  (** Waits on the host until every copy is submitted; raises the load's error. The devices may still be
      copying: each tensor's stamps order that for the work that reads it. *)

  val buffer : t -> int -> device:int -> Buffer.t
  (** Tensor [index] on the device at position [device] of [start]'s list: a buffer whose stamps carry
      the copies into it. Waits until those are submitted. *)

  val release : t -> unit
  (** Cancels the load if it runs and waits for its threads; buffers handed out stay valid. *)
end

(** {1 Interop (rig_interop.h)} *)

module Interop : sig
  (** Kinds of native handle rig turns into or from its own (rig_interop_kind). *)
  type kind = Device_pointer | Host_fd | Semaphore_fd | Sync_fd

  val supported : Device.t -> kind -> bool
  (** Whether the kind works for the device, decided by the device alone. Pure read. *)

  val point_fd : Point.t -> Unix.file_descr
  (** A new eventfd that becomes readable once the point is reached (or can never be): for
      [Unix.select] and event loops. The caller closes it. Waits for nothing. *)

  val export_sync_fd : Point.t -> Unix.file_descr option
  (** A new sync file that signals once the point is reached; [None] where it already is (Vulkan's
      convention). Commits the point. Raises [Unsupported] off Vulkan. *)

  val import_sync_fd : Device.t -> Unix.file_descr option -> Point.t
  (** A new point of the device that follows the sync file ([None]: one already signaled); the
      descriptor stays the caller's. Never blocks the host. *)

  val export_semaphore_fd : Point.t -> Unix.file_descr * int64
  (** The timeline semaphore of the point's device as a new descriptor, and the value covering the point.
      Raises [Unsupported] off Vulkan. *)

  val import_semaphore_fd : Device.t -> Unix.file_descr -> int64 -> Point.t
  (** A new point of the device that follows the semaphore reaching the value. Never blocks the host. *)

  val wrap_device : ?release:(unit -> unit) -> Device.t -> address:int64 -> length:int -> Buffer.t
  (** A buffer of the device over its memory at [address] (a CUdeviceptr, a HIP pointer; host memory for
      a memory device). [release] runs once the last buffer over it is released and every use reached
      (its exception is dropped); the memory must stay valid until then. *)

  val device_address : Buffer.t -> int64
  (** The address of the buffer's first byte as its device's work sees it. Raises [Unsupported] for
      Vulkan. Pure read. *)

  val last_write : Buffer.t -> Point.t
  (** The allocation's last write ([Point.none] if none): what a consumer outside rig follows. *)
end
