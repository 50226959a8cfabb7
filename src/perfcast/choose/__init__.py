"""Which device runs a workload best: predicted time, cost and energy per run, with validated error bands."""

from perfcast.choose.choice import Choice, choose, load_prices
from perfcast.choose.workload import Workload, WorkloadOptions, read_workload

__all__ = ["Choice", "Workload", "WorkloadOptions", "choose", "load_prices", "read_workload"]
