(* Must not compile (test/dune's rule checks the compiler's refusal): a timeline value, an int64, passed
   to a device's wait, which takes a Rig.Point.t. *)
let () =
  let a = Rig.memory_device "A" in
  Rig.Device.wait a (Rig.Device.submitted a)
