"""The what-if page: measured and predicted side by side (docs/whatif.md)."""
