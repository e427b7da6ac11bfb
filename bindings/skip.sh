#!/bin/sh
# A binding test whose toolchain is absent: says so and reports "skipped" (77) to meson.
echo "SKIP $1: $2"
exit 77
