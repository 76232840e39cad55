"""The C engine's ctypes declarations and the library loading: the one place that imports ctypes."""
