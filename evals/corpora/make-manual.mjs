// Write a long, manual-like Markdown document to stdout: a fictional 3D-printer firmware manual
// whose configuration reference is mostly code blocks (as real configuration references are), with
// many headings each followed by a paragraph, plus lists, tables, quotes, deep headings and FAQ
// headings that end in a question mark. Deterministic: no randomness, no dates.
// Usage: node make-manual.mjs > manual.md
import process from 'node:process'

const out = []
const w = (s = '') => out.push(s)

const AXES = ['x', 'y', 'z', 'z1', 'z2', 'z3']
const HEATERS = ['extruder', 'extruder1', 'heater_bed', 'heater_chamber']
const FANS = ['fan', 'heater_fan hotend_fan', 'controller_fan board_fan', 'temperature_fan exhaust']
const SENSORS = ['thermistor', 'pt1000', 'max31865', 'bme280', 'ds18b20']

function option(name, value, ...help) {
  return [`#${name}: ${value}`, ...help.map((h) => `#   ${h}`)]
}

function code(lines) {
  w('```')
  for (const l of lines) w(l)
  w('```')
  w()
}

w('# Tern Firmware Manual')
w()
w(
  'Tern is firmware for desktop 3D printers. A small program runs on the printer’s micro-controller and a host program ' +
    'on a single-board computer does the motion planning. This manual explains how to install it, how to write the ' +
    'configuration file, which commands it accepts and what to do when something goes wrong.',
)
w()

w('## Overview')
w()
w(
  'The host reads a single configuration file when it starts. Each section of that file describes one part of the ' +
    'printer: a stepper motor, a heater, a fan or a sensor. Options that are not given take the default shown in this ' +
    'reference. Lines that start with a hash sign are comments.',
)
w()
// Prose set larger than the body: a lead paragraph of several lines (ending in a colon, so only its
// length tells it from a heading) and a one-line warning sentence. Both are text, not headings.
w(
  '<p style="font-size: 1.3em">Tern keeps the timing of every step on the micro-controller and everything else on ' +
    'the host: the host can be a small, slow computer, and the printer still moves smoothly, because each command ' +
    'reaches the board long before it is due. The price is a second program to install, and a configuration file ' +
    'that describes the printer exactly in three kinds of section:</p>',
)
w()
w('- motion: steppers, drivers and endstops;')
w('- temperature: heaters, sensors and fans;')
w('- extras: probes, displays and macros.')
w()
w('<p style="font-size: 1.3em"><strong>Switch the printer off before you change a nozzle.</strong></p>')
w()
w('### How the pieces fit together')
w()
w(
  'The host sends timed step commands to the micro-controller ahead of time, so the printer never waits for the ' +
    'host during a move. The list below names the programs involved:',
)
w()
w('- **tern-host** plans moves, runs the command language and reads the configuration file.')
w('- **tern-mcu** runs on each micro-controller board and toggles pins at the scheduled times.')
w('- **tern-web** is an optional front end that shows temperatures and starts print jobs.')
w()
w('### Supported boards')
w()
w('The following boards were tested with this release. Other boards with the same processor usually work too.')
w()
w('| Board | Processor | Clock | Flash method |')
w('| --- | --- | --- | --- |')
const BOARDS = [
  ['Heron Mini', 'STM32F103', '72 MHz', 'SD card'],
  ['Heron Pro', 'STM32F446', '180 MHz', 'DFU'],
  ['Petrel 32', 'LPC1769', '120 MHz', 'SD card'],
  ['Gannet', 'RP2040', '125 MHz', 'USB mass storage'],
  ['Shearwater', 'SAMD51', '120 MHz', 'bootloader over USB'],
  ['Skua 8-bit', 'ATmega2560', '16 MHz', 'avrdude'],
]
for (const b of BOARDS) w(`| ${b.join(' | ')} |`)
w()

w('## Installation')
w()
w(
  'Installation has three steps: build the micro-controller program, copy it to the board, and install the host ' +
    'program. Each step is described below. Keep the board connected over USB for the whole procedure.',
)
w()
w('### Building the micro-controller program')
w()
w('Choose the board and its processor in the menu, then build. The build writes one file, out/tern.bin.')
w()
code(['cd ~/tern', 'make menuconfig', 'make clean', 'make -j2', 'ls -l out/tern.bin'])
w('### Flashing the board')
w()
w('The flash method depends on the board (see the table of supported boards above):')
w()
w('1. Copy out/tern.bin to an SD card as firmware.bin and insert the card.')
w('2. Power the board off and on again; the bootloader renames the file to FIRMWARE.CUR when it is done.')
w('3. Check that the board now answers on its serial port with `ls /dev/serial/by-id/`.')
w()
w('> Do not remove the SD card while the board is flashing. A half-written program leaves the board unable to boot.')
w()
w('### Installing the host program')
w()
w('The host program needs Python 3.9 or later. The install script creates a service that starts with the computer.')
w()
code(['./scripts/install-host.sh', 'sudo systemctl enable tern', 'sudo systemctl start tern', 'journalctl -u tern -f'])

w('## Configuration reference')
w()
w(
  'This chapter lists every configuration section. Each section starts with a short description followed by an ' +
    'example that shows all options with their defaults. Copy only the options you need to change into your ' +
    'printer.cfg file.',
)
w()

for (const axis of AXES) {
  const name = `stepper_${axis}`
  w(`### [${name}]`)
  w()
  w(
    `Stepper motor definition for the ${axis.toUpperCase()} axis. The pins are names of the micro-controller's pins ` +
      `and may be prefixed with an exclamation mark to invert them. The rotation distance sets how far the axis ` +
      `moves for one full turn of the motor, in millimetres.`,
  )
  w()
  code([
    `[${name}]`,
    ...option('step_pin', 'PB13', 'Step output pin. This parameter must be provided.'),
    ...option('dir_pin', '!PB12', 'Direction output pin. Prefix with ! to reverse the direction of travel.'),
    ...option('enable_pin', '!PB14', 'Enable pin (default is enable high; use ! to indicate enable low).'),
    ...option(
      'rotation_distance',
      '40',
      'Distance (in mm) that the axis travels with one full rotation of the stepper',
      'motor. This parameter must be provided.',
    ),
    ...option('microsteps', '16', 'The number of microsteps the driver uses. This parameter must be provided.'),
    ...option('full_steps_per_rotation', '200', 'The number of full steps for one rotation of the motor.'),
    ...option('gear_ratio', '', 'The gear ratio if the stepper motor is connected to the axis via a gearbox.'),
    ...option('step_pulse_duration', '0.000002', 'The minimum time between the step pulse edge and the next edge.'),
    ...option('endstop_pin', '^PC0', 'Endstop switch detection pin. Prefix with ^ for a pull-up resistor.'),
    ...option('position_endstop', '0', 'Location of the endstop (in mm) on the axis.'),
    ...option('position_min', '0', 'Minimum valid distance (in mm) the user may command the stepper to move to.'),
    ...option('position_max', '235', 'Maximum valid distance (in mm) the user may command the stepper to move to.'),
    ...option('homing_speed', '5.0', 'Maximum velocity (in mm/s) of the stepper when homing.'),
    ...option('homing_retract_dist', '5.0', 'Distance to back off (in mm) before homing a second time.'),
    ...option('homing_positive_dir', '', 'If true, homing will cause the stepper to move in a positive direction.'),
  ])
  if (axis.startsWith('z') && axis.length > 1) {
    w(
      `The ${axis.toUpperCase()} motor shares the Z axis with the other Z motors. It homes together with [stepper_z] ` +
        'and takes the same rotation distance unless a different one is given.',
    )
    w()
  }
}

for (const axis of AXES) {
  const name = `tmc2209 stepper_${axis}`
  w(`### [${name}]`)
  w()
  w(
    `Configure a TMC2209 stepper motor driver over a single wire UART for the ${axis.toUpperCase()} motor. The section ` +
      'name must match the stepper section it drives. Run currents are in amperes (RMS).',
  )
  w()
  code([
    `[${name}]`,
    ...option('uart_pin', 'PC11', 'The pin connected to the TMC2209 PDN_UART line. This parameter must be provided.'),
    ...option(
      'tx_pin',
      '',
      'If using separate receive and transmit lines to communicate with the driver then',
      'set uart_pin to the receive pin and tx_pin to the transmit pin.',
    ),
    ...option(
      'select_pins',
      '',
      'A comma separated list of pins to set prior to accessing the tmc2209 UART.',
      'This may be useful for configuring an analog mux for UART communication.',
    ),
    ...option(
      'uart_address',
      '0',
      'The address of the TMC2209 chip for UART messages (an integer between 0 and 3).',
      'This is typically used when multiple TMC2209 chips are connected to the same',
      'UART pin.',
    ),
    ...option(
      'run_current',
      '0.580',
      'The amount of current (in amps RMS) to configure the driver to use during',
      'stepper movement. This parameter must be provided.',
    ),
    ...option(
      'hold_current',
      '',
      'The amount of current (in amps RMS) to configure the driver to use when the',
      'stepper is not moving. Setting a hold_current is not recommended.',
    ),
    ...option('sense_resistor', '0.110', 'The resistance (in ohms) of the motor sense resistor.'),
    ...option(
      'stealthchop_threshold',
      '0',
      'The velocity (in mm/s) to set the "stealthChop" threshold to. When set,',
      '"stealthChop" mode will be enabled if the stepper motor velocity is below',
      'this value. Note that the "sensorless homing" code may temporarily override',
      'this setting during homing operations.',
    ),
    ...option(
      'coolstep_threshold',
      '',
      'The velocity (in mm/s) to set the TMC driver internal "CoolStep"',
      'threshold to. If set, the coolstep feature will be enabled when the stepper',
      'motor velocity is near or above this value.',
    ),
    ...option(
      'high_velocity_threshold',
      '',
      'The velocity (in mm/s) to set the TMC driver internal "high velocity"',
      'threshold (THIGH) to.',
    ),
    ...option('driver_TBL', '2', 'Set the given register during the configuration of the TMC2209 chip.'),
    ...option('driver_TOFF', '3', 'Set the given register during the configuration of the TMC2209 chip.'),
    ...option('driver_HSTRT', '5', 'Set the given register during the configuration of the TMC2209 chip.'),
    ...option('driver_HEND', '0', 'Set the given register during the configuration of the TMC2209 chip.'),
    ...option(
      'driver_SGTHRS',
      '0',
      'This is used for tuning sensorless homing. Check the TMC2209 datasheet about',
      'this parameter and how to tune it.',
    ),
    ...option(
      'diag_pin',
      '',
      'The micro-controller pin attached to the DIAG line of the TMC2209 chip. The pin',
      'is normally prefaced with "^" to enable a pullup. Setting this creates a',
      '"tmc2209_stepper_x:virtual_endstop" virtual pin which may be used as the',
      'stepper\'s endstop_pin. Doing this enables "sensorless homing".',
    ),
  ])
}

w('### [endstop_phase]')
w()
w(
  "Stepper phase adjusted endstops. To use this feature, define a config section with an 'endstop_phase' prefix " +
    "followed by the name of the corresponding stepper config section (for example, '[endstop_phase stepper_z]'). " +
    'This feature can improve the accuracy of endstop switches. Add a bare [endstop_phase] declaration to enable the ' +
    'ENDSTOP_PHASE_CALIBRATE command.',
)
w()
w('See the endstop phases guide for more information.')
w()
code([
  '[endstop_phase stepper_z]',
  ...option(
    'endstop_accuracy',
    '',
    'Sets the expected accuracy (in mm) of the endstop. This represents the maximum',
    'error distance the endstop may trigger (eg, if an endstop may occasionally',
    'trigger 100um early or up to 100um late then set this to 0.200 for 200um).',
  ),
  ...option('trigger_phase', '', 'This specifies the phase of the stepper motor driver to expect when hitting the endstop.'),
  ...option('endstop_align_zero', 'False', 'If true then the position_endstop of the axis will effectively be modified.'),
])

for (const heater of HEATERS) {
  w(`### [${heater}]`)
  w()
  w(
    `The ${heater.replace('_', ' ')} section describes a heater and its temperature sensor. The heater is switched ` +
      'with pulse-width modulation and regulated by a PID loop whose parameters come from the PID_CALIBRATE command.',
  )
  w()
  const lines = [
    `[${heater}]`,
    ...option('heater_pin', 'PA1', 'PWM output pin controlling the heater. This parameter must be provided.'),
    ...option(
      'max_power',
      '1.0',
      'The maximum power (expressed as a value from 0.0 to 1.0) that the heater_pin',
      'may be set to. The value 1.0 allows the pin to be set fully enabled for',
      'extended periods, while a value of 0.5 would allow the pin to be enabled for',
      'no more than half the time.',
    ),
    ...option('sensor_type', 'EPCOS 100K B57560G104F', 'Type of sensor. This parameter must be provided.'),
    ...option('sensor_pin', 'PC1', 'Analog input pin connected to the sensor. This parameter must be provided.'),
    ...option('pullup_resistor', '4700', 'The resistance (in ohms) of the pullup attached to the thermistor.'),
    ...option('smooth_time', '1.0', 'A time value (in seconds) over which temperature measurements will be smoothed.'),
    ...option('control', 'pid', 'Control algorithm (either pid or watermark). This parameter must be provided.'),
    ...option('pid_Kp', '22.2', 'Kp is the proportional constant for the pid.'),
    ...option('pid_Ki', '1.08', 'Ki is the integral constant for the pid.'),
    ...option('pid_Kd', '114', 'Kd is the derivative constant for the pid.'),
    ...option('min_temp', '0', 'Minimum temperature (in Celsius) before the firmware shuts down.'),
    ...option('max_temp', '250', 'Maximum temperature (in Celsius) before the firmware shuts down.'),
  ]
  if (heater.startsWith('extruder')) {
    lines.push(
      ...option('nozzle_diameter', '0.4', 'Diameter of the nozzle orifice (in mm). This parameter must be provided.'),
      ...option('filament_diameter', '1.75', 'The nominal diameter of the raw filament (in mm) as it enters the extruder.'),
      ...option(
        'pressure_advance',
        '0.0',
        'The amount of raw filament to push into the extruder during extruder',
        'acceleration. An equal amount of filament is retracted during deceleration. It',
        'is measured in millimeters per millimeter/second. The default is 0, which',
        'disables pressure advance. See the pressure advance guide for information on tuning pressure advance.',
      ),
      ...option(
        'pressure_advance_smooth_time',
        '0.040',
        'A time range (in seconds) to use when calculating the average extruder velocity.',
      ),
    )
  }
  code(lines)
  w('#### Choosing PID values')
  w()
  w(
    `Run PID_CALIBRATE HEATER=${heater.split(' ')[0]} TARGET=200 with the printer at room temperature. ` +
      'The command heats and cools the heater several times and prints the values to copy into this section.',
  )
  w()
}

for (const fan of FANS) {
  w(`### [${fan}]`)
  w()
  w(
    `The ${fan.split(' ')[0].replace('_', ' ')} section controls a fan. A fan can run at a fixed speed, follow a heater, ` +
      'or follow a temperature sensor, depending on the kind of section. Speeds are fractions from 0.0 to 1.0.',
  )
  w()
  code([
    `[${fan}]`,
    ...option('pin', 'PA8', 'Output pin controlling the fan. This parameter must be provided.'),
    ...option('max_power', '1.0', 'The maximum power (expressed as a value from 0.0 to 1.0) that the pin may be set to.'),
    ...option('shutdown_speed', '0', 'The desired fan speed (expressed as a value from 0.0 to 1.0) if the firmware shuts down.'),
    ...option('cycle_time', '0.010', 'The amount of time (in seconds) for each PWM power cycle to the fan.'),
    ...option('hardware_pwm', 'False', 'Enable this to use hardware PWM instead of software PWM.'),
    ...option('kick_start_time', '0.100', 'Time (in seconds) to spin the fan at full speed when first enabling it.'),
    ...option('off_below', '0.0', 'The minimum input speed which will power the fan (expressed as a value from 0.0 to 1.0).'),
    ...option('tachometer_pin', '', 'Tachometer input pin for monitoring fan speed. A pullup is generally required.'),
  ])
}

w('### Temperature sensors')
w()
w(
  'Each heater section names its sensor with sensor_type. The table lists the sensor types this release knows and ' +
    'the options each of them takes in addition to sensor_pin.',
)
w()
w('| sensor_type | Interface | Extra options | Range |')
w('| --- | --- | --- | --- |')
for (const s of SENSORS)
  w(
    `| ${s} | ${s.startsWith('max') ? 'SPI' : s === 'bme280' ? 'I2C' : 'analog'} | ${s === 'pt1000' ? 'pullup_resistor' : 'none'} | -40 to 300 C |`,
  )
w()

w('## Commands')
w()
w(
  'Commands are typed in the console of the front end or sent by a print file. Each command name is upper case and ' +
    'takes parameters written as NAME=value. The commands below are the ones most people need.',
)
w()
const COMMANDS = [
  ['G28', 'Home one or more axes. Without parameters every axis is homed in the order X, Y, Z.'],
  ['M104', 'Set the extruder temperature and return at once. Use M109 to wait for the temperature instead.'],
  ['M140', 'Set the bed temperature and return at once. Use M190 to wait for the temperature instead.'],
  ['PID_CALIBRATE', 'Run a PID calibration test on a heater and report the values to put in its section.'],
  ['ENDSTOP_PHASE_CALIBRATE', 'Report the stepper phase at which the endstop triggered, for the [endstop_phase] section.'],
  ['SET_PRESSURE_ADVANCE', 'Change the pressure advance of an extruder while printing, for example during tuning.'],
  ['SAVE_CONFIG', 'Write the values found by calibration commands to the end of printer.cfg and restart the host.'],
  ['FIRMWARE_RESTART', 'Restart the host program and the micro-controllers, reading the configuration file again.'],
]
for (const [cmd, text] of COMMANDS) {
  w(`### ${cmd}`)
  w()
  w(`${text} The command is accepted only while the printer is not printing unless stated otherwise.`)
  w()
  code([`${cmd} ${cmd.startsWith('M') ? 'S200' : cmd === 'G28' ? 'X Y' : 'HEATER=extruder'}`])
}

w('## Troubleshooting')
w()
w(
  'Most problems show up as a message in the console. Find the message in the list below; each entry says what it ' +
    'means and what to try first.',
)
w()
const PROBLEMS = [
  [
    'Timer too close',
    'The micro-controller got a step command for a time that had already passed.',
    ['Lower the microsteps of the busiest axis.', 'Check that the host is not overloaded by other programs.'],
  ],
  [
    'Lost communication with MCU',
    'The host did not hear from the board for several seconds.',
    ['Use a shorter, shielded USB cable.', 'Power the board from its own supply, not from USB alone.'],
  ],
  [
    'Heater extruder not heating at expected rate',
    'The temperature rose too slowly after the heater was switched on.',
    ['Check the heater cartridge and its wiring.', 'Run PID_CALIBRATE again after replacing parts.'],
  ],
  [
    'Move out of range',
    'A move asked for a position outside position_min and position_max.',
    ['Home the printer before printing.', 'Check the slicer’s bed size against the configuration.'],
  ],
]
for (const [title, meaning, steps] of PROBLEMS) {
  w(`### ${title}`)
  w()
  w(`${meaning} The print is stopped and the heaters are switched off to keep the printer safe.`)
  w()
  for (const s of steps) w(`- ${s}`)
  w()
}

w('## Frequently asked questions')
w()
w('Answers to questions that come up often on the mailing list.')
w()
const FAQ = [
  [
    'Can I use more than one micro-controller?',
    'Yes. Give each board its own [mcu name] section and prefix its pins with the name, as in name:PA1.',
  ],
  [
    'Why does the printer stop with "Move out of range" after a firmware update?',
    'The default position_max changed for some axes. Set it explicitly in every stepper section.',
  ],
  [
    'How do I find the serial port of my board?',
    'List /dev/serial/by-id/ with the board connected. Use that path, not /dev/ttyACM0, because it does not change between restarts.',
  ],
]
for (const [q, a] of FAQ) {
  w(`### ${q}`)
  w()
  w(a)
  w()
}

process.stdout.write(out.join('\n') + '\n')
