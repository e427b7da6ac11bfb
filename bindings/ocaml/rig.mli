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

  val wait : ?timeout:float -> t -> int64 -> unit
  (** Waits until the device reached the value, committing its held work first; [timeout] in seconds
      (none: no bound; 0: only checks). Raises [Timeout], [Invalid_argument] past the submitted value. *)


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

  val point : t -> int64 -> int64
  (** The point of a value of this device. *)

  val lost_reason : t -> string option
  (** Why the device was lost; [None] while it is not. *)
end

val memory_device : string -> Device.t
(** [Device.memory]. *)

val device_list : unit -> string list
(** The names {!Device.open_} accepts here. *)

val wait_point : ?timeout:float -> int64 -> unit
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

  val submit : ?waits:int64 list -> t -> int64
  (** Submits after the waits; returns the run's point. *)

  val release : t -> unit
end

val submit : Device.t -> Submission.part_spec list -> (Buffer.t * access) list -> int64
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
