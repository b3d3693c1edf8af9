# Platform Designer (qsys-script and _hw.tcl) stand-ins. The system loaded is taken
# to be Terasic's DE10-Nano GHRD: its instances and the interfaces the hwgen script
# uses are known here; a component's interfaces come from running its _hw.tcl.
source [file join [file dirname [info script]] recorder.tcl]
rename exit _exit
package ifneeded qsys 16.1 {package provide qsys 16.1}

set ::interfaces [dict create \
    clk_0 {clk clk_reset clk_in clk_in_reset} \
    hps_0 {h2f_lw_axi_master h2f_axi_master f2h_axi_slave h2f_reset f2h_axi_clock h2f_lw_axi_clock h2f_axi_clock} \
    altera_pll {refclk reset outclk0 locked}]
set ::instances [dict create]
set ::component [dict create]

proc load_system {path} {
    record load_system $path
    foreach name {clk_0 hps_0} { dict set ::instances $name [dict get $::interfaces $name] }
}
proc add_instance {name type} {
    record add_instance $name $type
    if {[dict exists $::interfaces $type]} {
        dict set ::instances $name [dict get $::interfaces $type]
    } elseif {[file exists ${type}_hw.tcl]} {
        set ::component [dict create]
        uplevel #0 [list source ${type}_hw.tcl]
        dict set ::instances $name [dict keys $::component]
    } else {
        error "no component '$type' (no ${type}_hw.tcl on the search path)"
    }
}
proc endpoint {text} {
    lassign [split $text .] inst iface
    if {![dict exists $::instances $inst]} { error "no instance '$inst' in '$text'" }
    if {$iface ni [dict get $::instances $inst]} { error "instance '$inst' has no interface '$iface'" }
}
proc add_connection {from to} { endpoint $from; endpoint $to; record add_connection $from $to }
proc set_connection_parameter_value {conn name value} {
    lassign [split $conn /] from to
    endpoint $from; endpoint $to
    record set_connection_parameter_value $conn $name $value
}
proc set_instance_parameter_value {inst name value} {
    if {![dict exists $::instances $inst]} { error "no instance '$inst'" }
    record set_instance_parameter_value $inst $name $value
}
define {save_system set_module_property add_fileset set_fileset_property add_fileset_file}
proc add_interface {name kind direction} { dict set ::component $name $kind; record add_interface $name $kind $direction }
proc set_interface_property {name args} {
    if {![dict exists $::component $name]} { error "no interface '$name'" }
    record set_interface_property $name {*}$args
}
proc add_interface_port {iface port role direction width} {
    if {![dict exists $::component $iface]} { error "no interface '$iface' for port '$port'" }
    record add_interface_port $iface $port $role $direction $width
}
