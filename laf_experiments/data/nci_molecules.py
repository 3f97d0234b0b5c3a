"""RDKit's NCI molecules with six properties, split by size.

RDKit's wheel ships `Data/NCI/first_5K.smi`, the first 4,999 molecules of
the NCI open database, and `first_5k.tpsa.csv`, their topological polar
surface area (TPSA) computed with Daylight's tools and Ertl's program, a
value per line in the same order. RDKit parses 4,991 of them (the others,
metal complexes and a hypervalent oxygen, are reported and skipped).
Beside TPSA, RDKit gives the other targets on the same molecules: Crippen's
logP and molar refractivity (sums of atom contributions), the number of
heavy atoms (a count), the fraction of sp3 carbons (a ratio of counts)
and the largest Gasteiger partial charge (a maximum).

Nothing is downloaded: the files come with RDKit (`pip install
"keras-laf[molecules]"`).
"""

import math
import pathlib

import numpy as np

from laf_experiments.data.molecule_tables import LabelledMolecules

SMILES_FILE = "first_5K.smi"
TPSA_FILE = "first_5k.tpsa.csv"
# The source the records name.
SOURCE = f"RDKit Data/NCI {SMILES_FILE}, {TPSA_FILE}"
# The targets, and what each is as a function of the atoms.
TARGETS = (
    "tpsa",
    "logp",
    "molar_refractivity",
    "heavy_atoms",
    "fraction_sp3",
    "max_gasteiger_charge",
)
TARGET_LABELS = {
    "tpsa": "TPSA (Å², shipped file)",
    "logp": "Crippen logP",
    "molar_refractivity": "Crippen molar refractivity",
    "heavy_atoms": "heavy atoms",
    "fraction_sp3": "fraction of sp3 carbons",
    "max_gasteiger_charge": "largest Gasteiger charge",
}
# Heavy-atom counts: training and validation molecules, then the test
# splits, each `(name, lowest, highest)` (inclusive), and the split the
# claims are judged on (41+ holds too few molecules).
TRAIN_SIZES = ("1-15", 1, 15)
TEST_SIZES = (("16-25", 16, 25), ("26-40", 26, 40), ("41+", 41, math.inf))
CLAIM_SPLIT = "26-40"


def nci_directory():
    """The folder of RDKit's NCI files, `RDConfig.RDDataDir/NCI`."""
    from rdkit import RDConfig

    return pathlib.Path(RDConfig.RDDataDir) / "NCI"


def read_tpsa(path, smiles):
    """The TPSA of each line of `first_5k.tpsa.csv`, checked against the
    SMILES file's order.

    Args:
        path: the CSV file: a `#` comment, then `SMILES,TPSA` lines.
        smiles: the SMILES of `first_5K.smi`, in order.

    Returns:
        float array `(len(smiles),)`.

    Raises:
        ValueError: the file's SMILES are not those of `smiles`, in order.
    """
    rows = [
        line.rsplit(",", 1)
        for line in pathlib.Path(path).read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    if [row[0] for row in rows] != list(smiles):
        raise ValueError(
            f"The SMILES of {path} are not those of the SMILES file, line "
            f"by line. Received: {len(rows)} rows for {len(smiles)} SMILES"
        )
    return np.array([float(row[1]) for row in rows])


def largest_gasteiger_charge(molecule):
    """The largest Gasteiger partial charge of a molecule's heavy atoms;
    NaN where RDKit has no parameters for an atom (metals, some boron)."""
    from rdkit import Chem
    from rdkit.Chem import rdPartialCharges

    molecule = Chem.Mol(molecule)
    rdPartialCharges.ComputeGasteigerCharges(molecule)
    charges = [a.GetDoubleProp("_GasteigerCharge") for a in molecule.GetAtoms()]
    largest = max(charges)
    return largest if np.isfinite(charges).all() else math.nan


def molecule_properties(molecules):
    """The RDKit targets of `TARGETS` but TPSA, for a list of molecules.

    Returns:
        A dict from target name to a float array `(len(molecules),)`,
        NaN where the property is undefined.
    """
    from rdkit.Chem import Crippen
    from rdkit.Chem import rdMolDescriptors

    functions = {
        "logp": Crippen.MolLogP,
        "molar_refractivity": Crippen.MolMR,
        "heavy_atoms": lambda molecule: molecule.GetNumHeavyAtoms(),
        "fraction_sp3": rdMolDescriptors.CalcFractionCSP3,
        "max_gasteiger_charge": largest_gasteiger_charge,
    }
    return {
        name: np.array([float(function(m)) for m in molecules])
        for name, function in functions.items()
    }


def load_nci_molecules(directory=None, workers=None, verbose=0):
    """Reads, parses and featurises RDKit's NCI molecules, with targets.

    Args:
        directory: the folder of `first_5K.smi` and `first_5k.tpsa.csv`.
            Defaults to `None`: RDKit's own (`nci_directory`).
        workers, verbose: as `keras_laf.datasets.smiles_to_graphs`.

    Returns:
        A `laf_experiments.data.molecule_tables.LabelledMolecules` with
        the labels of `TARGETS`. Unparsable SMILES are warned about by
        `keras_laf.datasets.smiles_to_graphs` and listed in `skipped`.
    """
    from keras_laf.datasets import read_smiles_file
    from keras_laf.datasets import smiles_to_graphs

    directory = pathlib.Path(directory or nci_directory())
    smiles, lines = read_smiles_file(directory / SMILES_FILE)
    tpsa = read_tpsa(directory / TPSA_FILE, smiles)
    graphs = smiles_to_graphs(
        smiles, lines, source=SMILES_FILE, workers=workers, verbose=verbose
    )
    parsed = set(graphs.line_numbers)
    kept = np.array([line in parsed for line in lines])
    labels = {"tpsa": tpsa[kept], **molecule_properties(graphs.molecules)}
    return LabelledMolecules(
        graphs, {name: labels[name] for name in TARGETS}, SOURCE
    )
