source [file join [file dirname [info script]] recorder.tcl]

define {create_project add_files update_compile_order create_bd_design set_property apply_bd_automation
        validate_bd_design save_bd_design launch_runs wait_on_run open_run report_utilization
        report_timing_summary assign_bd_address}

proc create_bd_cell {args} {
    set name [lindex $args end]
    dict set ::cells $name [lrange $args 0 end-1]
    record create_bd_cell {*}$args
    return $name
}
proc get_bd_cells {path} { cell_of $path; return $path }
proc get_bd_pins {path} { cell_of $path; return "pin:$path" }
proc get_bd_intf_pins {path} { cell_of $path; return "intf:$path" }
proc get_bd_addr_spaces {path} { cell_of $path; return "space:$path" }
proc get_bd_addr_segs {path} { cell_of $path; return "seg:$path" }
proc connect_bd_net {args} { record connect_bd_net {*}$args }
proc connect_bd_intf_net {args} {
    if {[llength $args] != 2} { error "connect_bd_intf_net takes two interfaces, not: $args" }
    record connect_bd_intf_net {*}$args
}
proc make_wrapper {args} { record make_wrapper {*}$args; return "system_wrapper.v" }
proc get_files {name} { return $name }
proc current_fileset {} { return sources_1 }
proc get_runs {name} { return $name }
proc get_timing_paths {args} { return path }
proc get_property {name object} {
    switch -- $name { PROGRESS { return "100%" } SLACK { return 0.1 } default { error "get_property $name?" } }
}
rename file _file
proc file {sub args} {
    if {$sub in {copy mkdir delete}} { record file $sub {*}$args; return }
    return [_file $sub {*}$args]
}
rename glob _glob
proc glob {args} { record glob {*}$args; return [lrange [lsearch -all -inline -not -glob $args -*] 0 0] }
rename exit _exit
proc exit {args} { record exit {*}$args }

# pblocks (an XDC read as Tcl): a pblock is used only once created; a site range is
# TYPE_XaYb:TYPE_XcYd of one site type, its corners in order
set ::pblocks [dict create]
proc create_pblock {name} {
    if {[dict exists $::pblocks $name]} { error "pblock '$name' created twice" }
    dict set ::pblocks $name 1
    record create_pblock $name
    return $name
}
proc get_pblocks {name} {
    if {![dict exists $::pblocks $name]} { error "no pblock '$name'" }
    return $name
}
proc get_cells {args} { return "cells:[lindex $args end]" }
proc add_cells_to_pblock {pblock cells} { get_pblocks $pblock; record add_cells_to_pblock $pblock $cells }
proc resize_pblock {pblock mode ranges} {
    get_pblocks $pblock
    if {$mode ne "-add"} { error "resize_pblock $mode?" }
    foreach r $ranges {
        if {![regexp {^([A-Z0-9]+)_X(\d+)Y(\d+):([A-Z0-9]+)_X(\d+)Y(\d+)$} $r -> t0 x0 y0 t1 x1 y1]
            || $t0 ne $t1 || $x0 > $x1 || $y0 > $y1 || $t0 ni {SLICE RAMB36 RAMB18 DSP48}} {
            error "bad site range '$r'"
        }
    }
    record resize_pblock $pblock $mode $ranges
}
