# Source: https://github.com/fani-lab/OpeNTF/issues/320
# Report: test phase of a team-recommendation FNN ran out of GPU memory on dblp; predictions had to be moved to CPU before being saved
# Shape: per-fold test() keeps every batch's sigmoid scores (device tensors, under no_grad) in a list built before the batch loop
# Expect: TML004 line 33
import os

import torch
from torch.utils.data import DataLoader


class Fnn(torch.nn.Module):
    def __init__(self, n_skills, n_hidden, n_experts):
        super().__init__()
        self.fc1 = torch.nn.Linear(n_skills, n_hidden)
        self.fc2 = torch.nn.Linear(n_hidden, n_experts)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test(model_path, splits, test_ds, cfg, device="cuda"):
    for foldidx in splits["folds"].keys():
        ckpt = f"{model_path}/state_dict_model.f{foldidx}.pt"
        model = Fnn(cfg.n_skills, cfg.n_hidden, cfg.n_experts).to(device)
        model.load_state_dict(torch.load(ckpt, map_location=device))
        model.eval()
        loader = DataLoader(test_ds, batch_size=cfg.b, shuffle=False)
        y_pred = []
        with torch.no_grad():
            for X, _ in loader:
                X = X.squeeze(1).to(device)
                scores = torch.sigmoid(model(X))
                y_pred.append(scores)  # expect: TML004
        y_pred = torch.vstack(y_pred)
        out = os.path.join(model_path, f"f{foldidx}.test.pred")
        torch.save(y_pred, out, pickle_protocol=4)
        print(f"fold {foldidx}: saved {tuple(y_pred.shape)} predictions to {out}")
