"""Device descriptions: the schema, the shipped YAML catalog, and detection of this machine."""

from perfcast.devices.catalog import (
    DeviceFileError,
    catalog,
    get_device,
    load_device_file,
    save_device,
)
from perfcast.devices.schema import (
    Device,
    Figure,
    InstructionKind,
    Precision,
    Provenance,
)

__all__ = [
    "Device",
    "DeviceFileError",
    "Figure",
    "InstructionKind",
    "Precision",
    "Provenance",
    "catalog",
    "get_device",
    "load_device_file",
    "save_device",
]
