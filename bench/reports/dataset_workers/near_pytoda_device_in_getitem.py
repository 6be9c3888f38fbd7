# Source: https://github.com/PaccMann/paccmann_datasets/issues/155
# Report: pytoda datasets put tensors on the GPU in __getitem__, breaking num_workers>0
# Shape: same datasets without a device argument: items are CPU tensors and the training loop moves each batch with .to(device) after the DataLoader (pin_memory=True)
# Expect: near-miss: must be silent
import pandas as pd
import torch
from torch.utils.data import DataLoader, Dataset

from pytoda.smiles.smiles_language import SMILESTokenizer


def get_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class SMILESTokenizerDataset(Dataset):
    def __init__(self, smi_filepaths, smiles_language=None, padding_length=None):
        self.smiles_language = smiles_language or SMILESTokenizer(padding_length=padding_length)
        self.smiles = []
        for path in smi_filepaths:
            with open(path) as fh:
                self.smiles.extend(line.split("\t")[0] for line in fh if line.strip())

    def __len__(self):
        return len(self.smiles)

    def __getitem__(self, index):
        token_indexes = self.smiles_language.smiles_to_token_indexes(self.smiles[index])
        return torch.tensor(token_indexes, dtype=torch.long)


class DrugSensitivityDataset(Dataset):
    def __init__(self, sensitivity_csv, smi_filepath, gene_expression_csv, smiles_language):
        self.smiles_dataset = SMILESTokenizerDataset([smi_filepath], smiles_language=smiles_language)
        self.gene_expression = pd.read_csv(gene_expression_csv, index_col=0)
        self.pairs = pd.read_csv(sensitivity_csv)[["drug_index", "cell_line", "IC50"]].values.tolist()

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, index):
        drug_index, cell_line, ic50 = self.pairs[index]
        smiles_tensor = self.smiles_dataset[int(drug_index)]
        gene_values = self.gene_expression.loc[cell_line].values
        gep_tensor = torch.tensor(gene_values, dtype=torch.float)
        ic50_tensor = torch.tensor([ic50], dtype=torch.float)
        return smiles_tensor, gep_tensor, ic50_tensor


def train(model, optimizer, params, smiles_language):
    device = get_device()
    dataset = DrugSensitivityDataset(
        params["train_sensitivity"], params["smi"], params["gep"], smiles_language
    )
    loader = DataLoader(dataset, batch_size=params["batch_size"], shuffle=True, num_workers=4, pin_memory=True)
    model.to(device).train()
    for epoch in range(params["epochs"]):
        for smiles, gep, y in loader:
            smiles, gep, y = smiles.to(device), gep.to(device), y.to(device)
            optimizer.zero_grad()
            y_hat, _ = model(smiles, gep)
            loss = model.loss(y_hat, y)
            loss.backward()
            optimizer.step()
