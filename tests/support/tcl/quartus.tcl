# quartus_sh -t stand-ins (::quartus::project): assignments only between project_open
# and project_close, each with its -name and value and, for a region's, its -section_id.
source [file join [file dirname [info script]] recorder.tcl]
rename exit _exit
package ifneeded ::quartus::project 1.0 {package provide ::quartus::project 1.0}
set ::open 0

proc project_open {args} { set ::open 1; record project_open {*}$args }
proc project_close {} {
    if {!$::open} { error "project_close without an open project" }
    set ::open 0
    record project_close
}
proc export_assignments {} { if {!$::open} { error "export_assignments without an open project" }; record export_assignments }
proc _assignment {kind argv} {
    if {!$::open} { error "$kind without an open project" }
    set opts [dict create]
    set value ""
    for {set i 0} {$i < [llength $argv]} {incr i} {
        set a [lindex $argv $i]
        if {$a in {-name -to -section_id}} {
            dict set opts $a [lindex $argv [incr i]]
        } else {
            set value $a
        }
    }
    if {![dict exists $opts -name]} { error "$kind without -name" }
    if {$kind eq "set_instance_assignment" && ![dict exists $opts -to]} { error "$kind without -to" }
    record $kind [dict get $opts -name] $value [expr {[dict exists $opts -to] ? [dict get $opts -to] : ""}] \
        [expr {[dict exists $opts -section_id] ? [dict get $opts -section_id] : ""}]
}
proc set_global_assignment {args} { _assignment set_global_assignment $args }
proc set_instance_assignment {args} { _assignment set_instance_assignment $args }
