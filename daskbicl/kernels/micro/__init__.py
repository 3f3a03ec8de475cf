"""The micro-object engine: memberships, the family walk, its planner, leaves and records."""
