# Recording stand-ins for vendor Tcl commands: each records its call on stdout (a
# record separator, then the command and its arguments joined by unit separators)
# and returns what the script needs.
# Commands not defined here stay undefined, so a script that misspells one fails
# with "invalid command name". Objects are checked where the tools would: a cell,
# pin or interface named before it was created is an error.
set ::cells [dict create]

proc record {name args} { puts -nonewline "\x1e[join [list $name {*}$args] \x1f]" }

proc define {names {result ""}} {
    foreach n $names { proc $n {args} [format {record %s {*}$args; return %s} [list $n] [list $result]] }
}

proc cell_of {path} {
    set cell [lindex [split [string trimleft $path /] /] 0]
    if {![dict exists $::cells $cell]} { error "no block design cell '$cell' (in '$path')" }
    return $cell
}
