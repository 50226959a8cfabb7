"""perfcast: how fast will this kernel run on that processor, and why."""

__version__ = "0.1.0"
