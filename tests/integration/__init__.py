"""pytester integration tests: one module per feature."""
