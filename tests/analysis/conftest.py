import pytest


@pytest.fixture(scope="session")
def demo_folder(tmp_path_factory):
    """The demo's ledger (fluke.analysis.run_demo): the support desk at two versions, graded, compared."""
    from fluke.analysis import run_demo

    folder = tmp_path_factory.mktemp("demo")
    run_demo(folder, null_pairs=20)
    return folder
