/* device_scan.cu - instantiates kbd's device-wide reduce/scan kernels (kbd/device.h) in this program.
 * Exactly one kernel source of a program does this; host code then calls kbd_device_scan_f32() etc. */
#include <kbd/tile.h>
#define KBD_DEVICE_IMPLEMENTATION
#include <kbd/device.h>
