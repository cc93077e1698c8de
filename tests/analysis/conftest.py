import pytest


@pytest.fixture(scope="session")
def demo_folder(tmp_path_factory):
    """The demo's ledger (fluke.report.run_demo): the support desk at two versions, graded, compared."""
    from fluke.report import run_demo

    folder = tmp_path_factory.mktemp("demo")
    run_demo(folder, null_pairs=20)
    return folder
