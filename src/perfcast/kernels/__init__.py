"""Reference workloads: synthetic primitives of known species (native C) and the Monte Carlo VaR kernel (OpenCL)."""
