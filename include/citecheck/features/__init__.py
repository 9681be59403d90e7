"""Product features over published data and over the rules: step-change monitoring, re-cite
suggestions, paired comparison of two scored outputs, capacity planning. The daily report and the
weekly review are packages of their own (`citecheck.report`, `citecheck.review`) in the same layer."""
