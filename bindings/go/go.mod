module rig.dev/rig

go 1.19
