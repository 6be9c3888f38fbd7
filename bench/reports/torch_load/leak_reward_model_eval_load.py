# Source: https://github.com/iitrpratibha93-hue/ml-portfolio/blob/88df51159e626fcaa9c83bb3ef8c8dc8a4a984fc/projects/rlhf_preference_model/evaluate.py
# Report: one edit from the repository's code: the fine-tuned reward-model checkpoint is loaded with torch.load and no map_location
# Shape: a checkpoint saved from a GPU run comes back onto the device it was saved from (GPU 0) before load_state_dict copies it; the no_grad scoring loop stays correct
# Expect: TML011 line 39
import json
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from transformers import AutoConfig, AutoModel


class RewardModel(nn.Module):
    def __init__(self, model_name, dropout=0.1):
        super().__init__()
        config = AutoConfig.from_pretrained(model_name)
        self.encoder = AutoModel.from_pretrained(model_name, config=config)
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(config.hidden_size, 1))

    def forward(self, input_ids, attention_mask):
        out = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
        return self.head(out.last_hidden_state[:, 0, :]).squeeze(-1)

    def score_pairs(self, chosen_ids, chosen_mask, rejected_ids, rejected_mask):
        return self.forward(chosen_ids, chosen_mask), self.forward(rejected_ids, rejected_mask)


def evaluate(checkpoint_path, dataset, batch_size=8):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(os.path.join(checkpoint_path, "training_config.json")) as f:
        model_name = json.load(f)["model_name"]
    loader = DataLoader(dataset, batch_size=batch_size, shuffle=False)

    model = RewardModel(model_name)
    state_path = os.path.join(checkpoint_path, "pytorch_model.bin")
    if not os.path.isfile(state_path):
        raise FileNotFoundError(state_path)
    state = torch.load(state_path)  # expect: TML011
    model.load_state_dict(state, strict=True)
    model = model.to(device)
    model.eval()

    correct, total = 0, 0
    with torch.no_grad():
        for batch in loader:
            s_chosen, s_rejected = model.score_pairs(
                batch["chosen_input_ids"].to(device), batch["chosen_attention_mask"].to(device),
                batch["rejected_input_ids"].to(device), batch["rejected_attention_mask"].to(device))
            correct += (s_chosen > s_rejected).sum().item()
            total += batch["chosen_input_ids"].size(0)
    accuracy = correct / total if total else 0.0
    print(f"Preference accuracy: {correct}/{total} = {accuracy:.2%}")
    return accuracy
