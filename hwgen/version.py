"""The generator's version: the package's, and the one its builds identify themselves
with (hwgen.registers, `id_version`)."""
VERSION = "0.1.0"
