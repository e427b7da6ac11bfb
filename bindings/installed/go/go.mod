module hello

go 1.19

require rig.dev/rig v0.1.0
