# Source: https://github.com/pytorch/pytorch/issues/12819
# Report: user moved each batch to the GPU inside collate_fn to overlap host-to-device copies with loading; with worker processes it failed with "cuda runtime error (3): initialization error"
# Shape: a module-level collate_fn pads variable-length samples, stacks them and calls .to(torch.device("cuda")) before returning the batch dict; DataLoader runs it with num_workers=4
# Expect: TML010 line 28; TML010 line 29
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset


class SpectrogramDataset(Dataset):
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        feats, tokens = self.items[idx]
        return torch.as_tensor(feats, dtype=torch.float32), torch.as_tensor(tokens, dtype=torch.long)


def collate_fn(batch):
    feats, tokens = zip(*batch)
    feat_lens = torch.tensor([f.shape[0] for f in feats])
    token_lens = torch.tensor([t.shape[0] for t in tokens])
    data = pad_sequence(feats, batch_first=True)
    target = pad_sequence(tokens, batch_first=True, padding_value=-1)
    data = data.to(torch.device("cuda"))  # expect: TML010
    target = target.to(torch.device("cuda"))  # expect: TML010
    return {"data": data, "target": target, "feat_lens": feat_lens, "token_lens": token_lens}


def train(model, items, optimizer, epochs=10):
    loader = DataLoader(SpectrogramDataset(items), batch_size=32, shuffle=True,
                        num_workers=4, collate_fn=collate_fn)
    ctc = torch.nn.CTCLoss(blank=0, zero_infinity=True)
    for _ in range(epochs):
        for batch in loader:
            optimizer.zero_grad()
            log_probs = model(batch["data"]).log_softmax(-1).transpose(0, 1)
            loss = ctc(log_probs, batch["target"], batch["feat_lens"], batch["token_lens"])
            loss.backward()
            optimizer.step()
