"""The root CLI's commands, one module each: report, regress, export, import, publish,
batches and design (plan, simulate and demo keep theirs in their own packages)."""
