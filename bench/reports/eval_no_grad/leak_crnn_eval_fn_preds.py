# Source: https://github.com/spring0691/OCR_Project/blob/c6ddd8880863ac0e76970e91f2c252e8fb438db7/Technique/CRNN/eval.py
# Report: eval_fn() calls model.eval() but no no_grad; the loss is reduced with .item() yet every batch's raw CTC predictions (still attached to their graph) are appended to fin_preds and returned, so validation holds all activations of the split
# Shape: a CRNN returns (preds, loss) from model(**batch); eval_fn keeps fin_loss as a float but appends batch_preds to a list that lives until decoding after the loop
# Expect: TML003 line 44; TML001 line 46
import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

DEVICE = "cuda"


class CRNN(nn.Module):
    def __init__(self, num_chars, hidden=256):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d((2, 1)),
        )
        self.rnn = nn.GRU(128 * 8, hidden, bidirectional=True, batch_first=True)
        self.head = nn.Linear(hidden * 2, num_chars + 1)

    def forward(self, images, targets=None, target_lengths=None):
        f = self.cnn(images)
        b, c, h, w = f.shape
        seq, _ = self.rnn(f.permute(0, 3, 1, 2).reshape(b, w, c * h))
        logits = self.head(seq)
        if targets is None:
            return logits, None
        log_probs = F.log_softmax(logits, 2).permute(1, 0, 2)
        input_lengths = torch.full((b,), w, dtype=torch.long)
        loss = F.ctc_loss(log_probs, targets, input_lengths, target_lengths)
        return logits, loss


def eval_fn(model, data_loader):
    model.eval()
    fin_loss = 0
    fin_preds = []
    tk0 = tqdm(data_loader, total=len(data_loader))
    for data in tk0:
        for key, value in data.items():
            data[key] = value.to(DEVICE)
        batch_preds, loss = model(**data)  # expect: TML003
        fin_loss += loss.item()
        fin_preds.append(batch_preds)  # expect: TML001
    return fin_preds, fin_loss / len(data_loader)


def decode(preds, idx2char):
    words = []
    for batch in preds:
        for seq in batch.softmax(2).argmax(2).cpu().numpy():
            chars, prev = [], -1
            for k in seq:
                if k != prev and k != 0:
                    chars.append(idx2char[k])
                prev = k
            words.append("".join(chars))
    return words


def run_validation(model, valid_loader, idx2char):
    valid_preds, valid_loss = eval_fn(model, valid_loader)
    words = decode(valid_preds, idx2char)
    print(f"valid loss {valid_loss:.4f}, first words: {words[:5]}")
    return valid_loss, words
