"""Statistics of measured series (durations, utilisation): pure numpy, shared by the GPU sampler,
the profilers and the storage check."""
