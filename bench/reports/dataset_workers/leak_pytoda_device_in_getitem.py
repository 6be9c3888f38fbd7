# Source: https://github.com/PaccMann/paccmann_datasets/issues/155
# Report: pytoda datasets created their tensors on the GPU inside the dataset (device argument defaulting to CUDA), so num_workers>0 failed with 'Cannot re-initialize CUDA in forked subprocess'; keeping data on CPU in the dataset gave a 5-20x speed-up
# Shape: two nested Dataset classes take device=get_device() as a default argument and build every item with torch.tensor(..., device=self.device) in __getitem__, loaded by a DataLoader with num_workers=4
# Expect: TML010 line 30; TML010 line 49; TML010 line 50
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

from pytoda.smiles.smiles_language import SMILESTokenizer


def get_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SMILESTokenizerDataset(Dataset):
    def __init__(self, smi_filepaths, smiles_language=None, padding_length=None, device=get_device()):
        self.device = device
        self.smiles_language = smiles_language or SMILESTokenizer(padding_length=padding_length)
        self.smiles = []
        for path in smi_filepaths:
            with open(path) as fh:
                self.smiles.extend(line.split("\t")[0] for line in fh if line.strip())

    def __len__(self):
        return len(self.smiles)

    def __getitem__(self, index):
        token_indexes = self.smiles_language.smiles_to_token_indexes(self.smiles[index])
        return torch.tensor(token_indexes, dtype=torch.long, device=self.device)  # expect: TML010


class DrugSensitivityDataset(Dataset):
    def __init__(self, sensitivity_csv, smi_filepath, gene_expression_csv, smiles_language, device=get_device()):
        self.device = device
        self.smiles_dataset = SMILESTokenizerDataset(
            [smi_filepath], smiles_language=smiles_language, device=device
        )
        self.gene_expression = pd.read_csv(gene_expression_csv, index_col=0)
        self.pairs = pd.read_csv(sensitivity_csv)[["drug_index", "cell_line", "IC50"]].values.tolist()

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, index):
        drug_index, cell_line, ic50 = self.pairs[index]
        smiles_tensor = self.smiles_dataset[int(drug_index)]
        gene_values = self.gene_expression.loc[cell_line].values
        gep_tensor = torch.tensor(gene_values, dtype=torch.float, device=self.device)  # expect: TML010
        ic50_tensor = torch.tensor([ic50], dtype=torch.float, device=self.device)  # expect: TML010
        return smiles_tensor, gep_tensor, ic50_tensor


def train(model, optimizer, params, smiles_language):
    dataset = DrugSensitivityDataset(
        params["train_sensitivity"], params["smi"], params["gep"], smiles_language
    )
    loader = DataLoader(dataset, batch_size=params["batch_size"], shuffle=True, num_workers=4)
    model.train()
    for epoch in range(params["epochs"]):
        for smiles, gep, y in loader:
            optimizer.zero_grad()
            y_hat, _ = model(smiles, gep)
            loss = model.loss(y_hat, y)
            loss.backward()
            optimizer.step()
