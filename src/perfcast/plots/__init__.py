"""Charts a user can put in a report (matplotlib, PNG/SVG/PDF)."""
