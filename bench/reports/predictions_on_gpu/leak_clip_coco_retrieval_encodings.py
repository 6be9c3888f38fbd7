# Source: https://github.com/openai/CLIP/issues/115
# Report: COCO retrieval recall@K script for CLIP; the author notes it uses a lot of GPU memory and that the per-batch encodings could be moved to the CPU right after encoding instead of being kept on the GPU
# Shape: every image/text batch encoding is appended to a list that outlives the loop while still on the GPU (under no_grad), so the whole val set's embeddings pile up on the device before the similarity matrix is built
# Expect: TML004 line 35; TML004 line 36
import torch
import torch.utils.data as dutils
from torchvision.datasets import CocoCaptions
import clip

device = "cuda"
coco_root = "data/coco/val2017"
coco_ann_file = "data/coco/annotations/captions_val2017.json"


def collate_pairs(batch):
    images = torch.stack([img for img, _ in batch])
    captions = [caps[:5] for _, caps in batch]
    return images, captions


@torch.no_grad()
def encode_dataset(model, dataset, batch_size=16):
    image_to_text_map = []
    text_to_image_map = []
    image_encodings = []
    text_encodings = []
    loader = dutils.DataLoader(dataset, batch_size=batch_size, collate_fn=collate_pairs)
    text_index = 0
    for image_index, (images, captions) in enumerate(loader):
        images = images.to(device)
        flat = [c for caps in captions for c in caps]
        tokens = clip.tokenize(flat).to(device)
        img_emb = model.encode_image(images)
        txt_emb = model.encode_text(tokens)
        image_encodings.append(img_emb)  # expect: TML004
        text_encodings.append(txt_emb)  # expect: TML004
        for caps in captions:
            ids = list(range(text_index, text_index + len(caps)))
            image_to_text_map.append(ids)
            text_to_image_map += [len(image_to_text_map) - 1] * len(caps)
            text_index += len(caps)
    image_encodings = torch.cat(image_encodings)
    text_encodings = torch.cat(text_encodings)
    image_encodings = image_encodings / image_encodings.norm(dim=-1, keepdim=True)
    text_encodings = text_encodings / text_encodings.norm(dim=-1, keepdim=True)
    return image_encodings, text_encodings, text_to_image_map, image_to_text_map


def recall_at_k(image_encodings, text_encodings, text_to_image_map, k_vals=(1, 5, 10)):
    dist_matrix = text_encodings @ image_encodings.T
    inds = torch.argsort(dist_matrix, dim=1, descending=True)
    targets = torch.tensor(text_to_image_map).unsqueeze(1)
    recalls = []
    for k in k_vals:
        topk = inds[:, :k].cpu()
        correct = torch.eq(topk, targets).any(dim=1)
        recalls.append(correct.float().mean().item())
    return recalls


if __name__ == "__main__":
    model, preprocess = clip.load("ViT-B/32", device=device)
    model.eval()
    dataset = CocoCaptions(root=coco_root, annFile=coco_ann_file, transform=preprocess)
    img_enc, txt_enc, t2i, i2t = encode_dataset(model, dataset)
    for k, r in zip((1, 5, 10), recall_at_k(img_enc, txt_enc, t2i)):
        print(f"Text-to-image R@{k}: {100 * r:.2f}%")
