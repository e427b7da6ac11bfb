(* A program using the installed findlib package rig (OCAMLPATH at the prefix), run with no
   LD_LIBRARY_PATH. Prints "hello, world". *)
let () =
  let a = Rig.memory_device "A" in
  let src = Rig.Buffer.of_string "hello, world" in
  let x = Rig.Buffer.create a 12 in
  let p = Rig.submit a [ Rig.Submission.copy ~src:0 ~dst:1 () ] [ (Rig.Buffer.borrow a src, Rig.Read); (x, Rig.Write) ] in
  Rig.wait_point ~timeout:1.0 p;
  Printf.printf "%s (rig %s, OCaml)\n" (Rig.Buffer.to_string x) (Rig.version ())
