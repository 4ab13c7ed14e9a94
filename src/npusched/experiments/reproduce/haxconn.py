"""HaX-CoNN (PPoPP'24) Sec. 5: moved to :mod:`npusched.experiments.studies.haxconn` (issue 29);
this name stays for ``npusched reproduce haxconn``'s callers."""

from npusched.experiments.studies.haxconn.paper import (
    FIG5_NETS,
    FIG7_EXPS,
    TABLE6,
    TABLE8_NETS,
    Experiment,
)
from npusched.experiments.studies.haxconn.run import PARTS, reproduce

__all__ = ["FIG5_NETS", "FIG7_EXPS", "PARTS", "TABLE6", "TABLE8_NETS", "Experiment", "reproduce"]
