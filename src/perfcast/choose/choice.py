"""`choose`: one workload predicted on many devices, each with its validated band, price and power, ranked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from perfcast.choose.bands import band_for, load_bands
from perfcast.choose.ranking import Estimate, Order, PriceQuote, Ranked, rank
from perfcast.choose.workload import Workload, WorkloadError, WorkloadOptions, read_workload
from perfcast.devices.catalog import known_devices
from perfcast.devices.schema import Device, Price
from perfcast.errors import InputError, NotFound

__all__ = ["Choice", "PRICES_VERSION", "PricesFile", "choose", "load_prices", "price_of"]

PRICES_VERSION = 1
CostBasis = Literal["rental", "purchase"]


class PricesFile(BaseModel):
    """A user's prices (YAML): `version: 1` and `prices: {DEVICE: {kind, usd, reference, date}}`, overriding the catalog's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(default=PRICES_VERSION, ge=1)
    prices: dict[str, Price | list[Price]]


class PricesFileError(InputError):
    """A prices file that cannot be read (the message names the field)."""


def load_prices(path: str | Path) -> dict[str, list[Price]]:
    """Return the prices of a user's prices file, per device name."""
    from perfcast.safe_yaml import load_model_file

    loaded = load_model_file(Path(path), PricesFile, PRICES_VERSION, "prices", PricesFileError)
    return {name: list(p) if isinstance(p, list) else [p] for name, p in loaded.prices.items()}


def price_of(device: Device, basis: CostBasis, overrides: Mapping[str, Sequence[Price]] = {}) -> PriceQuote | None:
    """Return the device's newest price of `basis` (rental: per hour; purchase: list or street, per unit), or None.

    A user's prices for the device replace the catalog's entirely, so that an override is never mixed with a
    stale catalog figure.
    """
    prices = overrides.get(device.name, device.prices)
    wanted = ("rental",) if basis == "rental" else ("list", "street")
    matching = sorted((p for p in prices if p.kind in wanted), key=lambda p: p.date)
    if not matching:
        return None
    newest = matching[-1]
    return PriceQuote(newest.kind, newest.usd, newest.reference, newest.date.isoformat())


@dataclass(frozen=True)
class Choice:
    """A workload ranked over devices: the ranking, the devices left out (and why), and the options used."""

    workload: Workload
    ranked: list[Ranked]
    left_out: dict[str, str]
    order: Order
    basis: CostBasis
    lifetime_years: float
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Return the choice as JSON-ready data (times in s, costs in USD per run, energies in J per run)."""
        def interval(r: Ranked) -> list[float | None] | None:
            if r.estimate.interval is None:
                return None
            low, high = r.estimate.interval
            return [low, None if high == float("inf") else high]

        return {
            "workload": {"name": self.workload.name, "kind": self.workload.kind, "model": self.workload.model,
                         "origin": self.workload.origin},
            "order": self.order, "cost_basis": self.basis, "lifetime_years": self.lifetime_years,
            "ranking": [{
                "rank": r.rank, "device": r.estimate.device, "kind": r.estimate.kind, "vendor": r.estimate.vendor,
                "model": r.estimate.model, "time_s": r.estimate.time, "interval_s": interval(r),
                "band": r.estimate.band.describe() if r.estimate.band else None,
                "band_source": r.estimate.band.source if r.estimate.band else None,
                "cost_usd": r.cost, "energy_j": r.energy, "tdp_w": r.estimate.tdp,
                "price": vars(r.estimate.price) if r.estimate.price else None,
                "tier": r.tier, "not_told_apart_from": list(r.overlaps), "pareto": r.pareto, "detail": r.estimate.detail,
                "measured_s": r.estimate.measured, "is_measurement": r.estimate.is_measurement,
                "notes": list(r.notes),
            } for r in self.ranked],
            "left_out": self.left_out,
            "notes": self.notes,
        }


def choose(workload: Workload | str | Path, devices: Sequence[Device], *, order: Order = "time",
           basis: CostBasis = "rental", lifetime_years: float = 4.0,
           prices: Mapping[str, Sequence[Price]] | None = None,
           options: WorkloadOptions | None = None) -> Choice:
    """Return `workload` (a Workload, or what read_workload reads) ranked over `devices` by time (s), cost or energy."""
    if not isinstance(workload, Workload):
        workload = read_workload(workload, options or WorkloadOptions())
    if not devices:
        raise InputError("choose needs at least one device")
    names: dict[str, Device] = {}
    for device in devices:
        if device.name in names and names[device.name] != device:
            raise InputError(f"two different devices are both named {device.name!r} (a device file and the catalog's?): "
                             "give the file another name")
        names[device.name] = device
    devices = list(names.values())
    unknown = sorted(set(prices) - set(names) - set(known_devices())) if prices else []
    if unknown:
        raise InputError(f"the prices file names device(s) perfcast does not know: {', '.join(unknown)} "
                         "(catalog names, or the names of the device files given)")
    bands = load_bands()
    estimates, left_out = [], {}
    for device in devices:
        try:
            prediction = workload.predict(device)
        except (NotFound, WorkloadError) as error:  # raised on purpose: this device cannot be predicted
            left_out[device.name] = str(error)
            continue
        band = None if prediction.is_measurement else band_for(bands, workload.model, workload.band_scope(device))
        estimates.append(Estimate(
            device.name, device.kind, device.vendor, workload.model, prediction.time, band, prediction.detail,
            device.tdp.value if device.tdp else None, price_of(device, basis, prices or {}),
            workload.measured.get(device.name), prediction.is_measurement))
    if not estimates:
        raise InputError(f"{workload.model} cannot predict {workload.name} on any of the devices: "
                         + "; ".join(f"{name}: {why}" for name, why in list(left_out.items())[:5]))
    notes = list(workload.notes)
    needs = {"cost": ("a price", lambda e: e.price), "energy": ("a TDP", lambda e: e.tdp)}
    if order in needs:
        what, figure = needs[order]
        if not any(figure(e) for e in estimates):
            raise InputError(f"no device ranked here has {what}, so none can be ranked by {order}: give prices with "
                             "--prices (or --cost purchase for list prices), or rank by time")
        missing = [e.device for e in estimates if not figure(e)]
        if missing:
            notes.append(f"without {what}, ranked last by time: {', '.join(missing)}")
    return Choice(workload, rank(estimates, order=order, lifetime_years=lifetime_years), left_out, order, basis,
                  lifetime_years, notes)
