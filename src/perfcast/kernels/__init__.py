"""Reference workloads: synthetic primitives of known species (native C), and later VaR Monte Carlo and others."""
