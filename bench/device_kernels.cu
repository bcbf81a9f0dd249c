/* device_kernels.cu - instantiates kbd's device-wide reduce/scan kernels for the benchmark programs. */
#include <kbd/tile.h>
#define KBD_DEVICE_IMPLEMENTATION
#include <kbd/device.h>
