"""The commands' parsers, one module per command module of hwgen.cli: each
`register(sub)` adds its commands' arguments and names, as the dotted name of a
function (`func`), the implementation that runs them. They import no implementation
and none of the library, so that --help and usage errors are instant."""
