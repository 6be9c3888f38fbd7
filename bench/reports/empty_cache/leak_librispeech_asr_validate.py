# Source: https://github.com/RishitSaxena55/LibriSpeech_ASR_With_Phonetic_Transcription/blob/f3918b95216a4fae2f04ac5891ac8e271264427d/validate.py
# Report: audited repository code: the CTC phoneme-recognition validation loop deletes its batch tensors and calls torch.cuda.empty_cache() after every validation batch
# Shape: keeps the original: inference_mode forward + CTC loss, float() accumulation, Levenshtein distance per batch, del of the batch tensors and empty_cache() inside the per-batch loop
# Expect: TML009 line 46
import Levenshtein
import torch
from tqdm import tqdm

device = "cuda" if torch.cuda.is_available() else "cpu"
criterion = torch.nn.CTCLoss()


def calculate_levenshtein(h, y, lh, ly, decoder, labels):
    beam_results, _, _, out_lens = decoder.decode(h, seq_lens=lh)
    dist = 0.0
    for i in range(h.shape[0]):
        pred = "".join(labels[t] for t in beam_results[i, 0, :out_lens[i, 0]])
        target = "".join(labels[t] for t in y[i, :ly[i]])
        dist += Levenshtein.distance(pred, target)
    return dist / h.shape[0]


def validate_model(model, val_loader, decoder, phoneme_map):
    model.eval()
    batch_bar = tqdm(total=len(val_loader), dynamic_ncols=True, leave=False, desc="Val")

    total_loss = 0
    vdist = 0

    for i, data in enumerate(val_loader):
        x, y, lx, ly = data
        x, y = x.to(device), y.to(device)

        with torch.inference_mode():
            h, lh = model(x, lx)
            h = torch.permute(h, (1, 0, 2))
            loss = criterion(h, y, lh, ly)

        total_loss += float(loss)
        vdist += calculate_levenshtein(torch.permute(h, (1, 0, 2)), y, lh, ly, decoder, phoneme_map)

        batch_bar.set_postfix(loss=f"{total_loss / (i + 1):.04f}", dist=f"{vdist / (i + 1):.04f}")
        batch_bar.update()

        del x, y, lx, ly, h, lh, loss
        torch.cuda.empty_cache()  # expect: TML009

    batch_bar.close()
    total_loss = total_loss / len(val_loader)
    val_dist = vdist / len(val_loader)
    return total_loss, val_dist
