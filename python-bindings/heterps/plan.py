"""The placement plan as a dict that renders as a table in notebooks."""

from __future__ import annotations

import html
from typing import Any, Dict


class Plan(dict):
    """The plan ``heterps-translate --hps-to-plan`` prints, as a dict (the
    same keys), shown in Jupyter as a table of its pipeline stages."""

    def _repr_html_(self) -> str:
        def number(value: Any) -> str:
            return f"{value:,.4g}" if isinstance(value, (int, float)) else html.escape(str(value))

        met = "met" if self.get("feasible") else "missed"
        head = (f"<p><b>{html.escape(str(self.get('strategy', '')))}</b> plan on "
                f"<b>{html.escape(str(self.get('cluster', '')))}</b>: "
                f"{number(self.get('throughput'))} samples/s against a target of "
                f"{number(self.get('target'))} ({met}), "
                f"{number(self.get('cost_per_million_samples'))} per million samples, "
                f"batch {number(self.get('batch'))}{self._step()}</p>")
        rows = []
        for index, stage in enumerate(self.get("stages", [])):
            layers = stage.get("layers", [])
            shown = ", ".join(html.escape(str(layer)) for layer in layers[:8])
            if len(layers) > 8:
                shown += f", ... ({len(layers)} in all)"
            rows.append(f"<tr><td>{index}</td><td>{html.escape(str(stage.get('device', '')))}</td>"
                        f"<td>{number(stage.get('replicas'))}</td>"
                        f"<td>{number(stage.get('throughput'))}</td><td>{shown}</td></tr>")
        return (head + "<table><tr><th>stage</th><th>device class</th><th>replicas</th>"
                "<th>samples/s</th><th>layers</th></tr>" + "".join(rows) + "</table>")


    def _step(self) -> str:
        """The training step shape the plan took, where not the direct one
        (docs/Planning.md, "Step shapes")."""
        parts = []
        if self.get("pass_steps"):
            parts.append(f"passes of {int(self['pass_steps'])} steps in "
                         f"{html.escape(str(self.get('pass_cache_device', 'host')))} memory")
        if self.get("sparse_staleness"):
            parts.append(f"sparse pushes {int(self['sparse_staleness'])} step late")
        if int(self.get("micro_batches", 1)) > 1:
            parts.append(f"{int(self['micro_batches'])} micro-batches per step, "
                         f"{float(self['step_throughput']):.1f} samples/s")
        return "; step: " + ", ".join(parts) if parts else ""


def as_plan(value: Dict[str, Any] | None) -> Plan | None:
    return None if value is None else Plan(value)
