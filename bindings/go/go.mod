module rig

go 1.19
